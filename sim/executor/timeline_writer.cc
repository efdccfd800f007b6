// Timeline writer: replay intervals -> proto::Timeline -> binary protobuf file.
#include "sim/executor/timeline_writer.h"

#include <algorithm>
#include <climits>
#include <fstream>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "sim/executor/analyze.h"
#include "sim/units/check.h"

namespace mofasim::executor {
namespace {

// One span before it becomes a message: sorted first, so the output order is decided here.
struct Record {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint32_t process = 0;
  std::uint32_t stream = 0;
  TaskId task = 0;
};

proto::Stream::Kind stream_kind(Stream s) {
  switch (s) {
    case Stream::kCompute: return proto::Stream::COMPUTE;
    case Stream::kTp: return proto::Stream::TP_COMM;
    case Stream::kCp: return proto::Stream::CP_COMM;
    case Stream::kEp: return proto::Stream::EP_COMM;
    case Stream::kPp: return proto::Stream::PP_COMM;
    case Stream::kDp: return proto::Stream::DP_COMM;
    case Stream::kD2H: return proto::Stream::COPY_D2H;
    case Stream::kH2D: return proto::Stream::COPY_H2D;
    case Stream::kHost: return proto::Stream::HOST;
    case Stream::kCount: break;
  }
  MOFASIM_UNREACHABLE("no timeline kind for this stream");
}

proto::Span::Category span_category(Category c) {
  switch (c) {
    case Category::kCompute: return proto::Span::COMPUTE;
    case Category::kRecompute: return proto::Span::RECOMPUTE;
    case Category::kTp: return proto::Span::TP;
    case Category::kCp: return proto::Span::CP;
    case Category::kEp: return proto::Span::EP;
    case Category::kPp: return proto::Span::PP;
    case Category::kDp: return proto::Span::DP;
    case Category::kOptimizer: return proto::Span::OPTIMIZER;
    case Category::kOffload: return proto::Span::OFFLOAD;
    case Category::kCount: break;
  }
  MOFASIM_UNREACHABLE("no timeline category for this category");
}

proto::Span::Phase span_phase(TaskPhase p) {
  switch (p) {
    case TaskPhase::kForward: return proto::Span::F;
    case TaskPhase::kBackward: return proto::Span::B;
    case TaskPhase::kInputGrad: return proto::Span::B_INPUT;
    case TaskPhase::kWeightGrad: return proto::Span::W;
    case TaskPhase::kRecompute: return proto::Span::R;
    case TaskPhase::kStep: return proto::Span::STEP;
  }
  MOFASIM_UNREACHABLE("no timeline phase for this phase");
}

void fill_summary(const StepResult& r, proto::StepSummary& out) {
  out.set_step_time_s(r.step_time_s);
  out.set_gpus(r.gpus);
  out.set_simulated_ranks(r.simulated_ranks);
  out.set_critical_stage(r.critical_stage);
  proto::StepSummary::Breakdown& b = *out.mutable_breakdown();
  b.set_compute_s(r.breakdown.compute);
  b.set_recompute_s(r.breakdown.recompute);
  b.set_optimizer_s(r.breakdown.optimizer);
  b.set_tp_s(r.breakdown.tp);
  b.set_cp_s(r.breakdown.cp);
  b.set_ep_s(r.breakdown.ep);
  b.set_pp_comm_s(r.breakdown.pp_comm);
  b.set_dp_s(r.breakdown.dp);
  b.set_offload_s(r.breakdown.offload);
  b.set_pp_bubble_s(r.breakdown.pp_bubble);
  out.set_tflops_per_gpu(r.tflops_per_gpu);
  out.set_mfu(r.mfu);
  out.set_hfu(r.hfu);
  out.set_tokens_per_s(r.tokens_per_s);
  out.set_peak_memory_bytes(r.peak_memory_bytes);
  for (const StageMemory& m : r.memory) {
    proto::StepSummary::StageMemory& pm = *out.add_memory();
    pm.set_stage(m.stage);
    pm.set_static_bytes(m.static_bytes);
    pm.set_peak_activation_bytes(m.peak_activation_bytes);
    pm.set_model_activation_bytes(m.model_activation_bytes);
    pm.set_reserved_bytes(m.reserved_bytes);
    pm.set_peak_bytes(m.peak_bytes);
    pm.set_capacity_bytes(m.capacity_bytes);
    pm.set_fits(m.fits());
    pm.set_allocated_bytes(m.allocated_bytes);
    pm.set_fragmentation_bytes(m.fragmentation_bytes);
    pm.set_cuda_context_bytes(m.cuda_context_bytes);
  }
  out.set_events(r.events);
  out.set_tasks(r.tasks);
  out.set_instances(r.instances);
}

}  // namespace

proto::Timeline build_timeline(const Workload& w, const ReplayOutput& r, const StepResult& result,
                               std::string_view scenario) {
  proto::Timeline tl;
  tl.set_scenario(std::string(scenario));
  tl.set_fidelity(r.map.fidelity() == Fidelity::kFull ? proto::Timeline::FULL : proto::Timeline::FOLDED);
  tl.set_step_ns(r.step_ns);

  std::vector<Record> records;
  std::uint32_t next_stream = 0;
  const InstanceTimes times(w, r);
  for (int s = 0; s < w.stages(); ++s) {
    const auto process = static_cast<std::uint32_t>(s);
    proto::Process& p = *tl.add_processes();
    p.set_id(process);
    p.set_name("stage " + std::to_string(s) + " (rank " + std::to_string(r.map.rank(s, 0)) + ")");
    p.set_stage(s);
    p.set_rank(r.map.rank(s, 0));

    const std::uint32_t own_base = next_stream;
    for (int st = 0; st < kStreamCount; ++st) {
      proto::Stream& ps = *tl.add_streams();
      ps.set_id(next_stream++);
      ps.set_process_id(process);
      ps.set_name(std::string(stream_name(static_cast<Stream>(st))));
      ps.set_kind(stream_kind(static_cast<Stream>(st)));
    }
    // A received transfer runs on its sender's PP stream, so the receiver gets one stream per
    // sender (ascending): the sender's stream order keeps it free of overlaps.
    const std::vector<Interval> intervals = stage_intervals(times, s);
    std::vector<int> senders;
    for (const Interval& iv : intervals) {
      if (w.stage(iv.task) != s) senders.push_back(w.stage(iv.task));
    }
    std::sort(senders.begin(), senders.end());
    senders.erase(std::unique(senders.begin(), senders.end()), senders.end());
    const std::uint32_t recv_base = next_stream;
    for (int sender : senders) {
      proto::Stream& ps = *tl.add_streams();
      ps.set_id(next_stream++);
      ps.set_process_id(process);
      ps.set_name("pp_recv from stage " + std::to_string(sender));
      ps.set_kind(proto::Stream::PP_RECV);
      ps.set_peer_process_id(static_cast<std::uint32_t>(sender));
    }
    for (const Interval& iv : intervals) {
      const int owner = w.stage(iv.task);
      std::uint32_t stream = own_base + static_cast<std::uint32_t>(w.stream(iv.task));
      if (owner != s) {
        const auto at = std::lower_bound(senders.begin(), senders.end(), owner) - senders.begin();
        stream = recv_base + static_cast<std::uint32_t>(at);
      }
      records.push_back({.start_ns = iv.start_ns, .end_ns = iv.end_ns, .process = process, .stream = stream,
                         .task = iv.task});
    }
  }
  std::sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
    return std::tie(a.start_ns, a.process, a.stream, a.task) < std::tie(b.start_ns, b.process, b.stream, b.task);
  });

  tl.mutable_spans()->Reserve(static_cast<int>(std::min<std::size_t>(records.size(), INT_MAX)));
  for (const Record& rec : records) {
    const TaskId t = rec.task;
    MOFASIM_CHECK(rec.end_ns >= rec.start_ns, "task instance ends before it starts");
    proto::Span& sp = *tl.add_spans();
    sp.set_process_id(rec.process);
    sp.set_stream_id(rec.stream);
    sp.set_start_ns(rec.start_ns);
    sp.set_duration_ns(rec.end_ns - rec.start_ns);
    sp.set_op(w.op_name(w.op(t)));
    sp.set_category(span_category(w.category(t)));
    sp.set_phase(span_phase(w.phase(t)));
    if (w.layer(t) != kNone) sp.set_layer(w.layer(t));
    if (w.microbatch(t) != kNone) sp.set_micro_batch(w.microbatch(t));
    sp.set_chunk(static_cast<std::uint32_t>(w.chunk(t)));
    sp.set_task(t);
    sp.set_work(w.work(t));
    if (w.kind(t) == TaskKind::kP2p) sp.set_peer_process_id(static_cast<std::uint32_t>(w.peer_stage(t)));
  }
  fill_summary(result, *tl.mutable_summary());
  return tl;
}

void write_timeline(const std::string& path, const Workload& w, const ReplayOutput& r, const StepResult& result,
                    std::string_view scenario) {
  const proto::Timeline tl = build_timeline(w, r, result, scenario);
  const std::size_t bytes = tl.ByteSizeLong();
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    throw std::runtime_error("timeline of " + std::to_string(tl.spans_size()) + " spans is " + std::to_string(bytes) +
                             " bytes, over protobuf's 2 GiB message limit; use --fidelity folded or a smaller plan");
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error("cannot open timeline file " + path + " for writing");
  if (!tl.SerializeToOstream(&f) || !f.flush()) throw std::runtime_error("failed writing timeline file " + path);
}

}  // namespace mofasim::executor
