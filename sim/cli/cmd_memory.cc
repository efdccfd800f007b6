// `mofasim memory SCENARIO`: parameter count, model FLOPs of one step, and per pipeline rank (under
// DualPipe a rank holds two stages, i and p - 1 - i, and its row counts both) the
// static memory (weights, gradients, optimizer states), the peak activation memory and the total
// against the GPU's capacity. Out of memory is reported as a result (which stage, by how much) with
// exit status 3 (kOutOfMemoryExit), so a script can test whether a layout fits.
#include <iostream>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "model/flops.h"
#include "model/memory.h"
#include "model/memory_reserve.h"
#include "model/params.h"
#include "schedules/factory.h"
#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/cli/memory_fit.h"
#include "sim/units/format.h"
#include "sim/scenario/scenario_specs.h"
#include "sim/scenario/loader.h"

namespace mofasim::cli {
namespace {
// Distinct from 0 (fits), 1 (internal failure) and 2 (bad input).
constexpr int kOutOfMemoryExit = 3;

const char* allocator_name(model::AllocatorKind a) {
  return a == model::AllocatorKind::kCaching ? "caching" : "expandable_segments";
}
}  // namespace

int run_memory(const Args& args) {
  CommonOptions common;
  std::string path;
  po::options_description desc("options");
  add_common_options(desc, common);
  desc.add_options()("scenario", po::value<std::string>(&path), "scenario YAML file");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  parse_command_line("memory", args, desc, pos, vm);
  if (common.help) {
    print_command_help("memory", "SCENARIO.yaml [--json] [--set field.path=value ...]", desc);
    std::cout << "exit status: 0 when every stage fits, 3 when one does not, 2 on bad input\n";
    return 0;
  }
  if (path.empty()) throw UsageError("mofasim memory: missing SCENARIO.yaml (see: mofasim memory --help)");

  const scenario::LoadedScenario s = load_checked(path, common.sets);
  const model::ModelParams params = model::model_params(s.model);
  const double flops = model::model_flops_per_step(s.model, s.parallel);
  const std::vector<double> inflight = schedules::stage_inflight_microbatches(s.model, s.parallel, s.features);
  const std::vector<model::RankOrder> orders = schedules::rank_orders(s.model, s.parallel, s.features);
  const model::MemoryReport report = model::memory_report(s.model, s.hardware, s.parallel, s.features, inflight, orders);

  // What a row is: a pipeline rank. Under DualPipe a rank holds two stages (i, and p - 1 - i on
  // the reverse lane): the row counts both chunks' weights and activations.
  const bool dualpipe = s.parallel.schedule == model::ScheduleKind::kDualPipe;
  auto stages_held = [&](int rank) {
    std::vector<int> held{rank};
    if (dualpipe && s.parallel.pp - 1 - rank != rank) held.push_back(s.parallel.pp - 1 - rank);
    return held;
  };

  if (common.json) {
    nlohmann::json j;
    j["scenario"] = s.proto.name();
    j["parameters_total"] = params.total();
    j["parameters_active"] = params.active();
    j["parameters_mtp"] = params.mtp;
    j["flops_per_step"] = flops;
    j["gpu_memory_bytes"] = s.hardware.gpu_memory_bytes;
    j["allocator"] = allocator_name(s.hardware.allocator);
    j["allocator_fragmentation"] = model::allocator_fragmentation(s.hardware);
    j["cuda_context_bytes"] = s.hardware.cuda_context_bytes;
    j["fits"] = report.fits();
    j["worst_stage"] = report.worst_rank;
    if (report.memfine_chunks > 0) j["memfine_chunks"] = report.memfine_chunks;
    nlohmann::json stages = nlohmann::json::array();
    for (const model::StageMemory& st : report.stages) {
      stages.push_back({{"stage", st.rank},
                        {"rank", st.rank},
                        {"stages_held", stages_held(st.rank)},
                        {"parameters", st.params.total()},
                        {"weights_bytes", st.static_bytes.weights},
                        {"gradients_bytes", st.static_bytes.grads},
                        {"optimizer_bytes", st.static_bytes.optimizer_states},
                        {"host_optimizer_bytes", st.static_bytes.host_bytes},
                        {"unsharded_bytes", st.static_bytes.unsharded},
                        {"fp8_weights_bytes", st.static_bytes.fp8_weights},
                        {"deepep_buffer_bytes", st.static_bytes.deepep_buffers},
                        {"static_bytes", st.static_bytes.total()},
                        {"inflight_microbatches", inflight[static_cast<std::size_t>(st.rank)]},
                        {"activation_bytes", st.activation_bytes},
                        {"offloaded_bytes", st.offloaded_bytes},
                        {"allocated_bytes", st.allocated_bytes},
                        {"fragmentation_bytes", st.fragmentation_bytes},
                        {"cuda_context_bytes", st.cuda_context_bytes},
                        {"reserved_bytes", st.reserved_bytes},
                        {"peak_bytes", st.peak_bytes},
                        {"fits", st.fits()},
                        {"excess_bytes", st.excess_bytes}});
    }
    j["stages"] = stages;
    bool fits = report.fits();
    if (s.proto.topology().node_hardware_size() > 0) {  // mixed GPUs: each against its own capacity
      const MemoryFit fit = memory_fit(s);
      fits = fit.fits;
      j["fits"] = fit.fits;
      j["mixed_gpus"] = to_json(fit);
    }
    std::cout << j.dump(2) << "\n";
    return fits ? 0 : kOutOfMemoryExit;
  }

  std::cout << "scenario        " << s.proto.name() << " (" << s.path << ")\n"
            << "model           " << s.model.name << ", " << format_count(params.total()) << " parameters ("
            << format_count(params.active()) << " active)\n"
            << "layout          tp " << s.parallel.tp << " cp " << s.parallel.cp << " pp " << s.parallel.pp << " vpp "
            << s.parallel.vpp << " dp " << s.parallel.dp << " ep " << s.parallel.ep << ", " << s.parallel.gpus()
            << " GPUs, m = " << s.parallel.microbatches() << "\n"
            << "model FLOPs     " << format_count(flops) << " per step\n"
            << "GPU memory      " << format_bytes(s.hardware.gpu_memory_bytes) << "\n"
            << "reserve         CUDA context " << format_bytes(s.hardware.cuda_context_bytes) << ", allocator "
            << allocator_name(s.hardware.allocator) << " (fragmentation "
            << format_number("%.3g", 100 * model::allocator_fragmentation(s.hardware)) << " %), other buffers "
            << format_bytes(s.hardware.memory_reserved_bytes) << "\n\n";
  if (dualpipe) {
    std::cout << "one row per pipeline rank; under DualPipe rank i holds stages i and " << s.parallel.pp - 1
              << " - i (both chunks' weights and activations)\n";
  }
  std::cout << (dualpipe ? " rank  stages  " : "stage  ")
            << "in-flight      weights    gradients    optimizer   activation    allocated     reserved  status\n";
  for (const model::StageMemory& st : report.stages) {
    char line[256];
    const std::vector<int> held = stages_held(st.rank);
    const std::string both = std::to_string(held.front()) + (held.size() > 1 ? "+" + std::to_string(held.back()) : "");
    if (dualpipe) {
      std::snprintf(line, sizeof line, "%5d  %6s  ", st.rank, both.c_str());
    } else {
      std::snprintf(line, sizeof line, "%5d  ", st.rank);
    }
    std::cout << line;
    std::snprintf(line, sizeof line, "%9.2f  %11s  %11s  %11s  %11s  %11s  %11s  %s\n",
                  inflight[static_cast<std::size_t>(st.rank)], format_bytes(st.static_bytes.weights).c_str(),
                  format_bytes(st.static_bytes.grads).c_str(), format_bytes(st.static_bytes.optimizer_states).c_str(),
                  format_bytes(st.activation_bytes).c_str(), format_bytes(st.allocated_bytes).c_str(),
                  format_bytes(st.peak_bytes).c_str(),
                  st.fits() ? "fits" : ("OUT OF MEMORY by " + format_bytes(st.excess_bytes)).c_str());
    std::cout << line;
  }
  std::cout << "\nallocated: what torch.cuda.max_memory_allocated measures; reserved: allocated / (1 - fragmentation)"
               " + CUDA context + other buffers, what the GPU must hold (fit is judged on it; docs/memory-fit.md)\n";
  bool mixed_fits = true;  // mixed GPUs: every GPU against its own capacity (the exit status follows it)
  if (s.proto.topology().node_hardware_size() > 0) {
    // The table is the hardware section's GPU; topology.node_hardware puts others on some nodes.
    const MemoryFit fit = memory_fit(s);
    mixed_fits = fit.fits;
    std::cout << "\nmixed GPUs: the table is " << s.hardware.name << "; against each GPU's own capacity, stage "
              << fit.worst_stage << " on " << fit.hardware << " has the least room: " << format_bytes(fit.peak_bytes)
              << " of " << format_bytes(fit.capacity_bytes) << (fit.fits ? " (fits)" : " (OUT OF MEMORY)") << "\n";
  }
  if (s.features.fp8.enabled) {
    // The table's columns do not show them: the peak includes each stage's FP8 weight copies.
    std::cout << "\nprecision fp8: the allocated peak includes the FP8 weight copies and transposes (stage 0: "
              << format_bytes(report.stages.front().static_bytes.fp8_weights) << ")\n";
  }
  if (report.stages.front().static_bytes.deepep_buffers > 0) {
    // Not a column either: DeepEP's NVLink and RDMA buffers (model/moe_deepep.h), the same on every stage.
    std::cout << "\ntoken_dispatcher_type flex: the allocated peak includes DeepEP's buffers ("
              << format_bytes(report.stages.front().static_bytes.deepep_buffers) << " per GPU)\n";
  }
  // Mixed GPUs: the line above judged every GPU against its own capacity; the table's GPU alone
  // does not decide.
  if (s.proto.topology().node_hardware_size() > 0) return mixed_fits ? 0 : kOutOfMemoryExit;
  if (!report.fits()) {
    const model::StageMemory& w = report.stages[static_cast<std::size_t>(report.worst_rank)];
    std::cout << "\nout of memory: " << (dualpipe ? "rank " : "stage ") << w.rank << " needs " << format_bytes(w.peak_bytes)
              << " reserved (" << format_bytes(w.allocated_bytes) << " allocated) of " << format_bytes(w.capacity_bytes)
              << " (" << format_bytes(w.excess_bytes) << " over)\n";
    return kOutOfMemoryExit;
  }
  return 0;
}

}  // namespace mofasim::cli
