// `mofasim import-megatron`: the parallel layout, batch, training length and cluster (see
// megatron_importer.h).
#include <algorithm>
#include <string>
#include <vector>

#include "sim/interop/megatron_importer.h"

namespace mofasim::interop::detail {
namespace {

// Link bandwidths (NCCL bus bandwidth per GPU) for the hardware presets the shipped scenarios
// use, with the same sources those scenarios cite.
struct LinkDefaults {
  std::string_view preset, intra, inter, source;
};
constexpr LinkDefaults kLinkDefaults[] = {
    {"h100-sxm", "370 GB/s", "46 GB/s", "as scenarios/small.yaml: NVLink4 busBW, NDR 400 Gb/s NIC"},
    {"h200", "370 GB/s", "46 GB/s", "as h100-sxm: NVLink4 busBW, NDR 400 Gb/s NIC"},
    {"h800", "160 GB/s", "46 GB/s", "as scenarios/deepseek-v3-h800-2048.yaml"},
    {"a100-80gb", "200 GB/s", "24 GB/s", "as scenarios/llama2-70b-a100-1024.yaml: NVLink3, 200 Gb/s IB"},
};

}  // namespace

// ------------------------------------------------------------------ parallelism
void Importer::parallelism() {
  tp_ = int_or("--tensor-model-parallel-size", 1);
  pp_ = int_or("--pipeline-model-parallel-size", 1);
  cp_ = int_or("--context-parallel-size", 1);
  const int ep = int_or("--expert-model-parallel-size", 1);
  auto why = [&](const char* flag, const char* fallback) { return has(flag) ? from(flag) : std::string(fallback); };
  set("parallelism", "tp", std::to_string(tp_), why("--tensor-model-parallel-size", "Megatron default 1"));
  set("parallelism", "cp", std::to_string(cp_), why("--context-parallel-size", "Megatron default 1"));
  set("parallelism", "pp", std::to_string(pp_), why("--pipeline-model-parallel-size", "Megatron default 1"));
  int vpp = 1;
  std::string vpp_why = "no virtual pipeline flag";
  if (has("--num-layers-per-virtual-pipeline-stage")) {
    const int per = static_cast<int>(integer("--num-layers-per-virtual-pipeline-stage"));
    if (layers_ % (per * pp_) != 0) {
      bad("--num-layers-per-virtual-pipeline-stage", "--num-layers (" + std::to_string(layers_) +
                                                        ") is not a multiple of this x pipeline size (" +
                                                        std::to_string(per * pp_) + ")");
    }
    vpp = layers_ / (per * pp_);
    vpp_why = from("--num-layers-per-virtual-pipeline-stage") + ": num_layers / (" + std::to_string(per) + " * pp)";
  } else if (has("--num-virtual-stages-per-pipeline-rank")) {
    vpp = static_cast<int>(integer("--num-virtual-stages-per-pipeline-rank"));
    vpp_why = from("--num-virtual-stages-per-pipeline-rank");
  }
  set("parallelism", "vpp", std::to_string(vpp), vpp_why);
  set("parallelism", "ep", std::to_string(ep), why("--expert-model-parallel-size", "Megatron default 1"));
  set("parallelism", "etp", std::to_string(int_or("--expert-tensor-parallel-size", tp_)),
      why("--expert-tensor-parallel-size", "Megatron default: the tensor-parallel size"));
  if (!has("--micro-batch-size")) throw ImportError(opt_.source_name + ": --micro-batch-size: required (Megatron has no default)");
  micro_ = static_cast<int>(integer("--micro-batch-size"));
  set("parallelism", "micro_batch", std::to_string(micro_), from("--micro-batch-size"));
  set("parallelism", "schedule", vpp > 1 ? "interleaved-1f1b" : "1f1b",
      vpp > 1 ? "Megatron's interleaved schedule (virtual stages > 1)" : "Megatron's 1F1B schedule");
  const bool sp = has("--sequence-parallel");
  set("parallelism", "sequence_parallel", sp ? "true" : "false", sp ? "--sequence-parallel" : "no --sequence-parallel");
  if (has("--use-tp-pp-dp-mapping")) {
    set("parallelism", "rank_order", "tp-cp-ep-pp-dp", "--use-tp-pp-dp-mapping (Megatron-Core's order for it)");
  } else {
    set("parallelism", "rank_order", "tp-cp-ep-dp-pp", "Megatron's default rank order");
  }
  vpp_ = vpp;
  context_parallel();
  pipeline_split();
}

// --cp-comm-type: one type for every layer (Megatron also takes one per layer; the scenario has
// one for all). Megatron spells the all-gather "allgather".
void Importer::context_parallel() {
  if (!has("--cp-comm-type")) return;
  const std::vector<std::string>& types = at("--cp-comm-type").values;
  if (types.empty()) bad("--cp-comm-type", "expects a value");
  for (const std::string& t : types) {
    if (t != "p2p" && t != "a2a" && t != "allgather" && t != "a2a+p2p") {
      bad("--cp-comm-type", "expected p2p, a2a, allgather or a2a+p2p, got '" + t + "'");
    }
  }
  if (std::any_of(types.begin(), types.end(), [&](const std::string& t) { return t != types.front(); })) {
    unsupported_value("--cp-comm-type", "a CP communication type per layer: the scenario has one for all layers");
  } else if (types.front() == "a2a+p2p") {
    unsupported_value("--cp-comm-type", "hierarchical CP (a2a inside a group, p2p across): not modelled");
  } else {
    set("parallelism", "cp_comm_type", types.front() == "allgather" ? "all_gather" : types.front(),
        "--cp-comm-type " + types.front());
  }
}

// The pipeline split: Megatron's --account-for-embedding/loss-in-pipeline-split, and its uneven
// first / last stage (--decoder-first/last-pipeline-num-layers: those stages hold the given layers,
// the other stages share the rest evenly, which Megatron asserts) as explicit stage_layers.
void Importer::pipeline_split() {
  const bool first = has("--decoder-first-pipeline-num-layers");
  const bool last = has("--decoder-last-pipeline-num-layers");
  for (const char* flag : {"--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"}) {
    if (!has(flag)) continue;
    if (first || last) bad(flag, "cannot be combined with --decoder-first/last-pipeline-num-layers");
    const std::string key = std::string(flag).substr(2);
    std::string field;
    for (char ch : key) field += ch == '-' ? '_' : ch;
    set("parallelism", field, "true", flag);
  }
  if (!first && !last) return;
  const std::string flag = first ? "--decoder-first-pipeline-num-layers" : "--decoder-last-pipeline-num-layers";
  if (pp_ < 2) bad(flag, "needs --pipeline-model-parallel-size > 1");
  const int n_first = first ? static_cast<int>(integer("--decoder-first-pipeline-num-layers", 0)) : -1;
  const int n_last = last ? static_cast<int>(integer("--decoder-last-pipeline-num-layers", 0)) : -1;
  const int rest = layers_ - std::max(0, n_first) - std::max(0, n_last);
  const int stages = pp_ - (first ? 1 : 0) - (last ? 1 : 0);
  if (rest < 0 || (stages == 0 ? rest != 0 : rest % stages != 0)) {
    bad(flag, "the other " + std::to_string(stages) + " stages cannot share the remaining " + std::to_string(rest) +
                  " of --num-layers " + std::to_string(layers_) + " evenly");
  }
  // With virtual stages every chunk of a rank holds the rank's layers / vpp (Megatron asserts the
  // division); chunk j of the scenario runs on rank j % pp (model/stage_layout.h).
  auto rank_layers = [&](int rank) { return rank == 0 && first ? n_first : rank == pp_ - 1 && last ? n_last : rest / stages; };
  for (int rank = 0; rank < pp_; ++rank) {
    if (rank_layers(rank) % vpp_ != 0) {
      bad(flag, "pipeline rank " + std::to_string(rank) + "'s " + std::to_string(rank_layers(rank)) +
                    " layers do not split over " + std::to_string(vpp_) + " virtual stages");
    }
  }
  std::vector<std::string> split;
  for (int chunk = 0; chunk < pp_ * vpp_; ++chunk) split.push_back(std::to_string(rank_layers(chunk % pp_) / vpp_));
  std::string list;
  for (const std::string& n : split) list += (list.empty() ? "" : ", ") + n;
  std::string why;
  if (first) why += from("--decoder-first-pipeline-num-layers");
  if (last) why += (why.empty() ? "" : ", ") + from("--decoder-last-pipeline-num-layers");
  set("parallelism", "stage_layers", "[" + list + "]", why + "; the other stages share the rest evenly");
}

void Importer::training() {
  if (has("--train-iters")) {
    set("training", "steps", word("--train-iters"), from("--train-iters"));
  } else if (has("--train-samples")) {
    const long long samples = integer("--train-samples");
    set("training", "tokens", std::to_string(samples * seq_), from("--train-samples") + " x --seq-length");
  }
}

// ------------------------------------------------------------------ cluster (not in Megatron's arguments)
void Importer::cluster() {
  if (opt_.hardware_preset.empty()) throw ImportError(cli_error("--hardware", "required: the GPU preset (Megatron's arguments do not name the hardware)"));
  set("hardware", "preset", opt_.hardware_preset, "--hardware");
  int per_node = 8;
  std::string per_node_why = "default 8 GPUs per node";
  if (opt_.gpus_per_node) {
    per_node = *opt_.gpus_per_node, per_node_why = "--gpus-per-node";
  } else if (has("--nproc_per_node")) {
    per_node = static_cast<int>(integer("--nproc_per_node")), per_node_why = "torchrun " + from("--nproc_per_node");
  }
  int gpus = 0;
  std::string gpus_why = "--gpus";
  if (opt_.gpus) {
    gpus = *opt_.gpus;
  } else if (has("--nnodes") && has("--nproc_per_node")) {
    gpus = static_cast<int>(integer("--nnodes") * integer("--nproc_per_node"));
    gpus_why = "torchrun " + from("--nnodes") + " x " + from("--nproc_per_node");
  } else {
    throw ImportError(cli_error("--gpus", "required: the job's GPU count (or a torchrun --nnodes and --nproc_per_node in the script)"));
  }
  const int model_parallel = tp_ * cp_ * pp_;
  if (gpus % model_parallel != 0) {
    throw ImportError(cli_error("--gpus", std::to_string(gpus) + " is not a multiple of tp*cp*pp = " + std::to_string(model_parallel)));
  }
  const int dp = gpus / model_parallel;
  set("topology", "gpus", std::to_string(gpus), gpus_why);
  set("topology", "gpus_per_node", std::to_string(per_node), per_node_why);
  std::string intra = opt_.intra_node_bandwidth;
  std::string inter = opt_.inter_node_bandwidth;
  std::string link_why = "--intra-node-bandwidth / --inter-node-bandwidth";
  for (const LinkDefaults& d : kLinkDefaults) {
    if (d.preset != opt_.hardware_preset) continue;
    if (intra.empty()) intra = d.intra;
    if (inter.empty()) inter = d.inter;
    link_why = std::string("default for ") + std::string(d.preset) + ": " + std::string(d.source);
  }
  if (intra.empty()) throw ImportError(cli_error("--intra-node-bandwidth", "required for hardware '" + opt_.hardware_preset + "' (no default link figures)"));
  if (inter.empty()) throw ImportError(cli_error("--inter-node-bandwidth", "required for hardware '" + opt_.hardware_preset + "' (no default link figures)"));
  set("topology", "intra_node", "{ bandwidth: \"" + intra + "\" }", link_why);
  set("topology", "inter_node", "{ bandwidth: \"" + inter + "\" }", link_why);
  set("parallelism", "dp", std::to_string(dp), "gpus / (tp * cp * pp) = " + std::to_string(gpus) + " / " + std::to_string(model_parallel));
  const int global = has("--global-batch-size") ? static_cast<int>(integer("--global-batch-size")) : micro_ * dp;
  if (global % (micro_ * dp) != 0) {
    bad("--global-batch-size", "must be a multiple of micro-batch x data-parallel size = " + std::to_string(micro_ * dp));
  }
  set("parallelism", "global_batch", std::to_string(global),
      has("--global-batch-size") ? from("--global-batch-size") : "Megatron default: micro-batch x data-parallel size");
}

}  // namespace mofasim::interop::detail
