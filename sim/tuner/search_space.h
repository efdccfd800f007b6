// What the tuner searches (MoFa §4.1, MoFa(42)): the fixed problem (model, hardware, cluster,
// global batch), the axes of the search (TP, CP, PP, vpp, EP, micro-batch, schedule and the
// on/off or kind of each optimisation feature), the switchable pruning rules, and one point of
// the space (Candidate) with the conversion to the runtime specs the cost models read.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/fault_spec.h"
#include "model/spec.h"
#include "topology/topology_spec.h"

namespace mofasim::tuner {

// The fixed part of the problem. topology.gpus is the GPU count N of MoFa(42). base_features
// supplies everything the search does not toggle: α/β of each overlap, TP-overlap chunks, μ_c,
// μ_b, dtypes, offload coefficients, bucket size.
struct TuneProblem {
  model::ModelSpec model;
  model::HardwareSpec hardware;
  topology::TopologySpec topology;
  int global_batch = 0;  // B, sequences per step
  model::FeatureSpec base_features;
};

// How an on/off feature is searched.
enum class Toggle : std::uint8_t { kOff, kOn, kSearch };

// Where the optimizer state lives: GPU (replicated over DP), GPU sharded over DP (distributed
// optimizer, MoFa(25) MoFa(26)) or host memory (CPU optimizer, MoFa(27) MoFa(28)).
enum class OptimizerMode : std::uint8_t { kGpu, kDistributed, kCpu };

// How layers may be split over the p·v model chunks.
enum class LayerSplit : std::uint8_t {
  kUniform,       // L % (p·v) == 0 only
  kLighterEnds,   // also ceil(L/(p·v)) per chunk with the first and then the last chunk one layer
                  // lighter (room for the embedding and the head, as Llama 3 §3.3.2 did with 126
                  // layers on 16 stages); at most two lighter chunks
};

// The axes. An empty list means "every legal value" (see enumerate.h for what that is).
struct SearchSpace {
  std::vector<int> tp;
  std::vector<int> cp;
  std::vector<int> pp;
  std::vector<int> ep;
  std::vector<int> micro_batch;
  int max_vpp = 8;                // interleaved 1F1B: v in [2, max_vpp]
  int max_micro_batch = 16;       // upper bound when micro_batch is empty
  std::vector<model::ScheduleKind> schedules = {model::ScheduleKind::k1F1B,
                                                model::ScheduleKind::kInterleaved1F1B};
  LayerSplit layer_split = LayerSplit::kLighterEnds;
};

// The features. Each overlap on/off, offload on/off, recompute kinds, optimizer modes.
struct FeatureSearch {
  Toggle tp_overlap = Toggle::kSearch;
  Toggle cp_overlap = Toggle::kSearch;
  Toggle ep_overlap = Toggle::kSearch;
  Toggle pp_overlap = Toggle::kSearch;
  Toggle dp_overlap = Toggle::kSearch;
  Toggle activation_offload = Toggle::kSearch;
  std::vector<model::RecomputeKind> recompute = {model::RecomputeKind::kNone, model::RecomputeKind::kSelective,
                                                 model::RecomputeKind::kFull};
  std::vector<OptimizerMode> optimizer = {OptimizerMode::kGpu, OptimizerMode::kDistributed, OptimizerMode::kCpu};
};

// Why a point of the raw space is not evaluated. The first five are the hard constraints of
// MoFa(42) and of the schedules (never switched off); the rest are pruning rules, each switchable.
// A point is charged to the first reason in this order that removes it.
enum class Reason : std::uint8_t {
  // Constraints.
  kTpDividesHeads,        // a % t == 0 and g % t == 0
  kLayerSplit,            // the L layers split over p·v chunks (LayerSplit)
  kExpertPlacement,       // e | num_experts and e | d·c
  kBatchDivides,          // B % (b·d) == 0
  kScheduleShape,         // interleaved: m % p == 0 and p > 1 (checked after the rules); DualPipe: p, m even and m >= 2p
  // Layout rules (MoFa §4.1 and ours).
  kTpWithinNode,          // t <= gpus_per_node (MoFa rule 4)
  kMicrobatchesCoverPipeline,  // m >= p (MoFa rule 3)
  kVppNeedsPipeline,      // interleaving only with p > 1
  kCpNeedsLongSequence,   // c > 1 only when s >= cp_min_seq_length
  // Feature rules.
  kInertFeature,          // a feature with nothing to act on (e.g. TP overlap at t = 1): a duplicate
  kOverlapDominates,      // overlap off when the on variant's α = β = 1 (never slower)
  kMemorySaverNotNeeded,  // recompute / offload when a lighter variant already fits
  kCount,
};
inline constexpr int kReasonCount = static_cast<int>(Reason::kCount);
inline constexpr Reason kFirstRule = Reason::kTpWithinNode;

std::string_view to_string(Reason reason);
std::string_view to_string(OptimizerMode mode);
std::string_view to_string(model::RecomputeKind kind);
std::string_view to_string(model::ScheduleKind kind);  // "1f1b", "interleaved", ...

// Each pruning rule on or off (constraints are always on).
struct PruneRules {
  bool tp_within_node = true;
  bool microbatches_cover_pipeline = true;
  bool vpp_needs_pipeline = true;
  bool cp_needs_long_sequence = true;
  int cp_min_seq_length = 16384;
  bool inert_feature = true;
  bool overlap_dominates = true;
  bool memory_saver_not_needed = true;

  // Every rule off: the brute-force space minus the hard constraints.
  static PruneRules none();
};

// Which slice of the enumeration this run evaluates: layouts whose enumeration index i satisfies
// i % count == index. count = 1 is the whole space.
struct Shard {
  int index = 0;
  int count = 1;
};

// The parallel layout part of a configuration is declared below; E2E tuning (MoFa(43) MoFa(44))
// needs the failure model and the run length.
struct Layout;

struct E2ESettings {
  // λ, failure classes or fixed downtime D, t_save, T_init. failure_units = 0 means
  // gpus / gpus_per_node; checkpoint.interval_steps is ignored (the tuner optimises it, MoFa(44)).
  model::FaultSpec fault;
  std::int64_t n_steps = 0;  // N_steps of the run
  // Optional per-layout t_save in seconds (e.g. checkpoint bytes per GPU over a write bandwidth);
  // unset = fault.checkpoint.save_time_s for every layout, in which case the E2E ranking equals
  // the step ranking (T_total at the optimal interval grows with T_step).
  std::function<double(const Layout&)> save_time_s;
};

struct Progress {
  std::uint64_t layouts_done = 0;
  std::uint64_t layouts_total = 0;  // in this shard
  std::uint64_t evaluated = 0;
};

// Layouts one search may enumerate (the shipped scenarios have at most about 3e5; a layout costs
// about a microsecond when pruned, so this is minutes of work). A larger space is refused up front.
inline constexpr std::uint64_t kMaxRawLayouts = 100'000'000;

// The search space is larger than kMaxRawLayouts: bad input (GPU count, batch, axes), not a bug.
class SearchSpaceTooLarge : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Worker threads at most: each holds its own partial result, so a huge count only exhausts memory.
inline constexpr int kMaxTuneThreads = 1024;

struct TuneOptions {
  SearchSpace space;
  FeatureSearch features;
  PruneRules rules;
  Shard shard;
  bool sequence_parallel = true;  // with t > 1 (Megatron's usual pairing)
  bool keep_pruned = false;       // record every removed configuration (for tests and audits)
  int threads = 1;                // worker threads in [1, kMaxTuneThreads]; results do not depend on it
  std::optional<E2ESettings> e2e; // set: also choose N_ckpt and rank by T_total (MoFa(43))
  std::function<void(const Progress&)> progress;  // called from the calling thread, in order
};

// The parallel layout part of a configuration (everything but the features).
struct Layout {
  int tp = 1;
  int cp = 1;
  int pp = 1;
  int vpp = 1;
  int ep = 1;
  int dp = 1;
  int micro_batch = 1;
  model::ScheduleKind schedule = model::ScheduleKind::k1F1B;
  friend bool operator==(const Layout&, const Layout&) = default;
};

struct FeatureChoice {
  bool tp_overlap = false;
  bool cp_overlap = false;
  bool ep_overlap = false;
  bool pp_overlap = false;
  bool dp_overlap = false;
  bool activation_offload = false;
  model::RecomputeKind recompute = model::RecomputeKind::kNone;
  OptimizerMode optimizer = OptimizerMode::kGpu;
  friend bool operator==(const FeatureChoice&, const FeatureChoice&) = default;
};

// One configuration. `id` is its position in the full (unsharded) enumeration:
// layout_index * feature_variants + feature_index, so ties break the same way in every shard.
struct Candidate {
  Layout layout;
  FeatureChoice features;
  std::uint64_t id = 0;
  friend bool operator==(const Candidate&, const Candidate&) = default;
};

// Micro-batches per pipeline, m = B / (b·d).
int microbatches(const Layout& layout, int global_batch);

// How L layers fill `chunks` chunks: per_chunk layers each, the first (and, when lighter == 2, the
// last) chunk one fewer. nullopt when they do not split under `split`.
struct SplitShape {
  int per_chunk = 0;
  int lighter = 0;  // 0, 1 or 2
};
std::optional<SplitShape> split_shape(int num_layers, int chunks, LayerSplit split);

// Layers per chunk for the layout (size p·v, chunk order), or empty when the split is uniform.
// Throws std::invalid_argument if the layers do not split under `split`.
std::vector<int> stage_layers(int num_layers, int pp, int vpp, LayerSplit split);

// Fill `out` (reused across calls: no allocation once its stage_layers has capacity) with the
// runtime specs of one configuration.
void to_parallel_spec(const Candidate& c, const TuneProblem& problem, const TuneOptions& options,
                      model::ParallelSpec& out);
model::FeatureSpec to_feature_spec(const FeatureChoice& f, const model::FeatureSpec& base);
// The same for one layout, `parallel` its specs (to_parallel_spec). The scenario's HSDP instance
// count (FeatureSpec::dist_opt_instances) is kept for a layout whose dp*cp and expert-DP size
// tp*cp*dp/(ep*etp) it divides (model::optimizer_shard_groups, the sizes the memory model and the
// placement shard over), with a sharded optimizer; elsewhere the candidate shards over its whole
// DP group (N = 1), since the count is a property of the scenario's DP size.
model::FeatureSpec to_feature_spec(const FeatureChoice& f, const model::FeatureSpec& base,
                                   const model::ParallelSpec& parallel);

// Throws std::invalid_argument naming the field when the problem or the options are unusable
// (non-positive sizes, an axis value < 1, shard index out of range, an empty feature list).
void validate(const TuneProblem& problem, const TuneOptions& options);

// "t8 c1 p8 v2 e1 d1 b1 interleaved" and "tp-ov pp-ov offload cpu-opt" style labels.
std::string layout_label(const Layout& layout);
std::string feature_label(const FeatureChoice& features);

}  // namespace mofasim::tuner
