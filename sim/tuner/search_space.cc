// Names, labels, validation and the Candidate -> runtime spec conversion (see search_space.h).
#include "sim/tuner/search_space.h"

#include <stdexcept>

#include "model/memory.h"
#include "sim/units/check.h"

namespace mofasim::tuner {
namespace {

void check_axis(const std::vector<int>& axis, const char* name) {
  for (int v : axis) {
    if (v < 1) throw std::invalid_argument(std::string("tune.space.") + name + ": values must be >= 1, got " + std::to_string(v));
  }
}

}  // namespace

std::string_view to_string(Reason reason) {
  switch (reason) {
    case Reason::kTpDividesHeads: return "tp_divides_heads";
    case Reason::kLayerSplit: return "layer_split";
    case Reason::kExpertPlacement: return "expert_placement";
    case Reason::kBatchDivides: return "batch_divides";
    case Reason::kScheduleShape: return "schedule_shape";
    case Reason::kTpWithinNode: return "tp_within_node";
    case Reason::kMicrobatchesCoverPipeline: return "microbatches_cover_pipeline";
    case Reason::kVppNeedsPipeline: return "vpp_needs_pipeline";
    case Reason::kCpNeedsLongSequence: return "cp_needs_long_sequence";
    case Reason::kInertFeature: return "inert_feature";
    case Reason::kOverlapDominates: return "overlap_dominates";
    case Reason::kMemorySaverNotNeeded: return "memory_saver_not_needed";
    case Reason::kCount: break;
  }
  MOFASIM_UNREACHABLE("bad tuner::Reason");
}

std::string_view to_string(OptimizerMode mode) {
  switch (mode) {
    case OptimizerMode::kGpu: return "gpu";
    case OptimizerMode::kDistributed: return "distributed";
    case OptimizerMode::kCpu: return "cpu";
  }
  MOFASIM_UNREACHABLE("bad OptimizerMode");
}

std::string_view to_string(model::RecomputeKind kind) {
  switch (kind) {
    case model::RecomputeKind::kNone: return "none";
    case model::RecomputeKind::kSelective: return "selective";
    case model::RecomputeKind::kFull: return "full";
  }
  MOFASIM_UNREACHABLE("bad RecomputeKind");
}

std::string_view to_string(model::ScheduleKind kind) {
  switch (kind) {
    case model::ScheduleKind::kGpipe: return "gpipe";
    case model::ScheduleKind::k1F1B: return "1f1b";
    case model::ScheduleKind::kInterleaved1F1B: return "interleaved";
    case model::ScheduleKind::kZbH1: return "zb-h1";
    case model::ScheduleKind::kDualPipe: return "dualpipe";
  }
  MOFASIM_UNREACHABLE("bad ScheduleKind");
}

PruneRules PruneRules::none() {
  return PruneRules{.tp_within_node = false,
                    .microbatches_cover_pipeline = false,
                    .vpp_needs_pipeline = false,
                    .cp_needs_long_sequence = false,
                    .cp_min_seq_length = 0,
                    .inert_feature = false,
                    .overlap_dominates = false,
                    .memory_saver_not_needed = false};
}

int microbatches(const Layout& layout, int global_batch) {
  return global_batch / (layout.micro_batch * layout.dp);
}

std::optional<SplitShape> split_shape(int num_layers, int chunks, LayerSplit split) {
  if (chunks < 1 || num_layers < chunks) return std::nullopt;
  const int per_chunk = (num_layers + chunks - 1) / chunks;
  const int lighter = per_chunk * chunks - num_layers;
  if (lighter == 0) return SplitShape{.per_chunk = per_chunk, .lighter = 0};
  if (split != LayerSplit::kLighterEnds || lighter > 2 || lighter >= chunks || per_chunk < 2) return std::nullopt;
  return SplitShape{.per_chunk = per_chunk, .lighter = lighter};
}

namespace {

void fill_stage_layers(const SplitShape& shape, int chunks, std::vector<int>& out) {
  out.clear();
  if (shape.lighter == 0) return;
  out.assign(static_cast<std::size_t>(chunks), shape.per_chunk);
  out.front() -= 1;                       // the embedding's chunk
  if (shape.lighter == 2) out.back() -= 1;  // the head's chunk
}

}  // namespace

std::vector<int> stage_layers(int num_layers, int pp, int vpp, LayerSplit split) {
  const std::optional<SplitShape> shape = split_shape(num_layers, pp * vpp, split);
  if (!shape) {
    throw std::invalid_argument("layer split: " + std::to_string(num_layers) + " layers do not split over pp*vpp = " +
                                std::to_string(pp * vpp) + " chunks");
  }
  std::vector<int> out;
  fill_stage_layers(*shape, pp * vpp, out);
  return out;
}

void to_parallel_spec(const Candidate& c, const TuneProblem& problem, const TuneOptions& options,
                      model::ParallelSpec& out) {
  const Layout& l = c.layout;
  out.tp = l.tp;
  out.cp = l.cp;
  out.pp = l.pp;
  out.vpp = l.vpp;
  out.dp = l.dp;
  out.ep = l.ep;
  out.etp = 1;
  out.micro_batch = l.micro_batch;
  out.global_batch = problem.global_batch;
  out.sequence_parallel = options.sequence_parallel && l.tp > 1;
  out.schedule = l.schedule;
  const int chunks = l.pp * l.vpp;
  const std::optional<SplitShape> shape = split_shape(problem.model.num_layers, chunks, options.space.layer_split);
  if (!shape) {
    throw std::invalid_argument("layer split: " + std::to_string(problem.model.num_layers) +
                                " layers do not split over pp*vpp = " + std::to_string(chunks) + " chunks");
  }
  fill_stage_layers(*shape, chunks, out.stage_layers);
}

model::FeatureSpec to_feature_spec(const FeatureChoice& f, const model::FeatureSpec& base) {
  model::FeatureSpec out = base;
  out.tp_overlap.enabled = f.tp_overlap;
  out.cp_overlap.enabled = f.cp_overlap;
  out.ep_overlap.enabled = f.ep_overlap;
  out.pp_overlap.enabled = f.pp_overlap;
  out.dp_overlap.enabled = f.dp_overlap;
  out.activation_offload.enabled = f.activation_offload;
  out.recompute = f.recompute;
  out.distributed_optimizer = f.optimizer == OptimizerMode::kDistributed;
  out.optimizer_placement =
      f.optimizer == OptimizerMode::kCpu ? model::OptimizerPlacement::kCpu : model::OptimizerPlacement::kGpu;
  return out;
}

model::FeatureSpec to_feature_spec(const FeatureChoice& f, const model::FeatureSpec& base,
                                   const model::ParallelSpec& parallel) {
  model::FeatureSpec out = to_feature_spec(f, base);
  const int n = out.dist_opt_instances;
  if (n <= 1) return out;
  const bool sharded = model::dp_sharding(out) != model::DpSharding::kNone;
  const model::ShardGroups whole = model::optimizer_shard_groups(parallel);  // enumerated layouts fold
  if (!sharded || whole.dense_dp % n != 0 || whole.expert_dp % n != 0) out.dist_opt_instances = 1;
  return out;
}

void validate(const TuneProblem& problem, const TuneOptions& options) {
  const auto& m = problem.model;
  if (m.num_layers < 1) throw std::invalid_argument("tune.model.num_layers must be >= 1");
  if (m.num_attention_heads < 1 || m.num_kv_heads < 1) {
    throw std::invalid_argument("tune.model: num_attention_heads and num_kv_heads must be >= 1");
  }
  if (problem.topology.gpus < 1) throw std::invalid_argument("tune.topology.gpus must be >= 1");
  if (problem.topology.gpus_per_node < 1) throw std::invalid_argument("tune.topology.gpus_per_node must be >= 1");
  if (problem.global_batch < 1) throw std::invalid_argument("tune.global_batch must be >= 1");
  const SearchSpace& s = options.space;
  check_axis(s.tp, "tp");
  check_axis(s.cp, "cp");
  check_axis(s.pp, "pp");
  check_axis(s.ep, "ep");
  check_axis(s.micro_batch, "micro_batch");
  if (s.max_vpp < 1) throw std::invalid_argument("tune.space.max_vpp must be >= 1");
  if (s.max_micro_batch < 1) throw std::invalid_argument("tune.space.max_micro_batch must be >= 1");
  if (s.schedules.empty()) throw std::invalid_argument("tune.space.schedules must list at least one schedule");
  if (options.features.recompute.empty()) throw std::invalid_argument("tune.features.recompute must not be empty");
  if (options.features.optimizer.empty()) throw std::invalid_argument("tune.features.optimizer must not be empty");
  if (options.threads < 1 || options.threads > kMaxTuneThreads) {
    throw std::invalid_argument("tune.threads must be in [1, " + std::to_string(kMaxTuneThreads) + "], got " +
                                std::to_string(options.threads));
  }
  if (options.e2e && options.e2e->n_steps < 1) {
    throw std::invalid_argument("tune.e2e.n_steps must be >= 1, got " + std::to_string(options.e2e->n_steps));
  }
  if (options.shard.count < 1 || options.shard.index < 0 || options.shard.index >= options.shard.count) {
    throw std::invalid_argument("tune.shard: need 0 <= index < count, got " + std::to_string(options.shard.index) + "/" +
                                std::to_string(options.shard.count));
  }
}

std::string layout_label(const Layout& l) {
  // Appended piece by piece: g++ 12 -Wrestrict misfires on chains of `const char* + std::string`.
  std::string out;
  auto field = [&out](char name, int value) {
    out += name;
    out += std::to_string(value);
    out += ' ';
  };
  field('t', l.tp);
  field('c', l.cp);
  field('p', l.pp);
  field('v', l.vpp);
  field('e', l.ep);
  field('d', l.dp);
  field('b', l.micro_batch);
  out += to_string(l.schedule);
  return out;
}

std::string feature_label(const FeatureChoice& f) {
  std::string out;
  auto add = [&out](std::string_view s) {
    if (!out.empty()) out += '+';
    out += s;
  };
  if (f.tp_overlap) add("tp-ov");
  if (f.cp_overlap) add("cp-ov");
  if (f.ep_overlap) add("ep-ov");
  if (f.pp_overlap) add("pp-ov");
  if (f.dp_overlap) add("dp-ov");
  if (f.activation_offload) add("offload");
  if (f.recompute != model::RecomputeKind::kNone) {
    add("rc-");
    out += to_string(f.recompute);
  }
  add("opt-");
  out += to_string(f.optimizer);
  return out;
}

}  // namespace mofasim::tuner
