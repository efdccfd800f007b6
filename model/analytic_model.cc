// The closed-form MoFa step model (see analytic_model.h for the readings chosen).
#include "model/analytic_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <optional>
#include <string>
#include <utility>

#include "model/analytic_overlap.h"
#include "model/compute_time.h"
#include "model/flops.h"
#include "model/recompute_modules.h"
#include "model/shape.h"
#include "model/stage_layout.h"
#include "schedules/dualpipe.h"
#include "schedules/factory.h"
#include "sim/units/check.h"
#include "topology/comm_group.h"
#include "topology/placement.h"
#include "topology/topology.h"

namespace mofasim::model {
namespace {

using topology::CollectiveKind;
using Communicator = topology::CommGroup;
using topology::GroupKind;

// Exposed time of one pass (F, input-grad B or weight-grad W) of a layer or chunk, by kind.
struct PassTime {
  double compute = 0;
  double tp = 0;
  double cp = 0;
  double ep = 0;
  double a2a = 0;  // all-to-all seconds inside `ep` (what EP overlap pairs)
  [[nodiscard]] double total() const { return compute + tp + cp + ep; }
  PassTime& operator+=(const PassTime& o) {
    compute += o.compute;
    tp += o.tp;
    cp += o.cp;
    ep += o.ep;
    a2a += o.a2a;
    return *this;
  }
  friend PassTime operator*(double k, PassTime t) {
    return {k * t.compute, k * t.tp, k * t.cp, k * t.ep, k * t.a2a};
  }
};

struct LayerTime {
  PassTime f;  // forward, MoFa(7)
  PassTime b;  // input-gradient backward (+ recompute), MoFa(8)
  PassTime w;  // weight-gradient backward
  [[nodiscard]] PassTime backward() const {
    PassTime t = b;
    t += w;
    return t;
  }
  LayerTime& operator+=(const LayerTime& o) {
    f += o.f;
    b += o.b;
    w += o.w;
    return *this;
  }
};
LayerTime scaled(double k, const LayerTime& t) { return {k * t.f, k * t.b, k * t.w}; }

CollectiveKind to_topology(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return CollectiveKind::kAllReduce;
    case Collective::kReduceScatter: return CollectiveKind::kReduceScatter;
    case Collective::kAllGather: return CollectiveKind::kAllGather;
    case Collective::kAllToAll: return CollectiveKind::kAllToAll;
    case Collective::kSendRecv: return CollectiveKind::kSendRecv;
  }
  MOFASIM_UNREACHABLE("unknown Collective");
}

AnalyticModel::CommCost comm_cost(const Communicator& group, CollectiveKind kind, double bytes) {
  const topology::CollectiveCost c = group.cost(kind, topology::default_algorithm(kind), Bytes{bytes});
  return {c.latency_seconds, c.bandwidth_seconds};
}

double seconds(const AnalyticModel::CommCost& c, double inv_mub) { return c.latency + c.bandwidth * inv_mub; }

// The slowest of the send/recv hops between consecutive members of `members` (wrapping around
// when `ring`), for S = bytes. A hop's cost depends only on the link class it crosses, so only the
// first hop of each class is priced (the same hop the full scan would keep).
AnalyticModel::CommCost slowest_hop(const topology::Topology& topo, std::span<const int> members, bool ring,
                                    double bytes) {
  AnalyticModel::CommCost worst;
  std::array<bool, topology::kLinkClassCount> priced{};
  const int n = static_cast<int>(members.size());
  const int hops = ring ? n : n - 1;
  for (int i = 0; i < hops && n > 1; ++i) {
    const std::array<int, 2> pair{members[static_cast<std::size_t>(i)],
                                  members[static_cast<std::size_t>((i + 1) % n)]};
    bool& seen = priced[static_cast<std::size_t>(topo.link_class(pair[0], pair[1]))];
    if (seen) continue;
    seen = true;
    const Communicator g(topo, pair);
    const AnalyticModel::CommCost c = comm_cost(g, CollectiveKind::kSendRecv, bytes);
    if (c.latency + c.bandwidth > worst.latency + worst.bandwidth) worst = c;
  }
  return worst;
}

// One of rank 0's groups on a cluster holding just its GPUs, laid out like the full one: the same
// spec but for its size, GPUs of one node on one node, nodes of one supernode in one supernode,
// GPUs of one rail (one NIC) on one rail, and GPU ids in the same order; supernodes, nodes, rails
// and the GPUs of a rail are renumbered densely. A group's shape, the α–β cost of its collectives
// and the link class of each hop between two members depend on nothing else (the bandwidths,
// latencies and NIC and spine capacities come from the spec and the GPUs per NIC, both kept), so
// they are the full cluster's, without building the full cluster's link list (two entries per GPU
// and four per NIC).
class CompactGroup {
 public:
  // gpus: ascending distinct GPU ids of the full cluster `spec` (already validated).
  CompactGroup(const topology::TopologySpec& spec, std::span<const int> gpus)
      : gpus_(gpus.size()), topology_(compact_spec(spec, gpus, gpus_)) {}
  CompactGroup(const CompactGroup&) = delete;
  CompactGroup& operator=(const CompactGroup&) = delete;

  [[nodiscard]] const topology::Topology& topology() const { return topology_; }
  [[nodiscard]] std::span<const int> gpus() const { return gpus_; }  // compact ids, in the order given

 private:
  static topology::TopologySpec compact_spec(const topology::TopologySpec& spec, std::span<const int> gpus,
                                             std::vector<int>& compact) {
    const int per_node = spec.gpus_per_node;
    const int per_nic = per_node / spec.nics();
    const int per_supernode = spec.nodes_per_supernode == 0 ? spec.nodes() : spec.nodes_per_supernode;
    // Each GPU's supernode, node in it, rail on the node and place on the rail, renumbered densely
    // in ascending order; then the compact id on a cluster of supernodes × widest nodes, each of
    // `rails` rails × per_nic GPUs.
    struct Slot {
      int supernode;
      int node;
      int rail;
      int place;
    };
    std::vector<Slot> slots(gpus.size());
    int widest = 1;  // most nodes in one supernode
    int rails = 1;   // most rails used on one node
    Slot at{.supernode = -1, .node = 0, .rail = 0, .place = 0};
    int prev_node = -1;
    int prev_supernode = -1;
    int prev_rail = -1;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      MOFASIM_CHECK(i == 0 || gpus[i] > gpus[i - 1], "group GPUs are ascending and distinct");
      const int node = gpus[i] / per_node;
      const int rail = (gpus[i] - node * per_node) / per_nic;
      const int supernode = node / per_supernode;
      if (supernode != prev_supernode) {
        at = {.supernode = at.supernode + 1, .node = 0, .rail = 0, .place = 0};
      } else if (node != prev_node) {
        at = {.supernode = at.supernode, .node = at.node + 1, .rail = 0, .place = 0};
      } else if (rail != prev_rail) {
        at = {.supernode = at.supernode, .node = at.node, .rail = at.rail + 1, .place = 0};
      } else {
        ++at.place;
      }
      slots[i] = at;
      widest = std::max(widest, at.node + 1);
      rails = std::max(rails, at.rail + 1);
      prev_node = node;
      prev_supernode = supernode;
      prev_rail = rail;
    }
    const int supernodes = at.supernode + 1;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const Slot& x = slots[i];
      compact[i] = ((x.supernode * widest + x.node) * rails + x.rail) * per_nic + x.place;
    }
    topology::TopologySpec out = spec;
    out.gpus_per_node = rails * per_nic;
    out.nics_per_node = rails;
    out.gpus = supernodes * widest * out.gpus_per_node;
    out.nodes_per_supernode = supernodes > 1 ? widest : 0;
    return out;
  }

  std::vector<int> gpus_;
  topology::Topology topology_;
};

// The groups rank 0 belongs to (all groups of a kind have the same shape on the uniform clusters
// TopologySpec describes; rank 0's is taken as the representative), each distinct member list
// placed once: groups of one (all {0}), etp = tp, or the expert-DP group equal to the dense one
// share theirs. Entries never move, so the references handed out stay valid.
class RankZeroGroups {
 public:
  RankZeroGroups(const topology::TopologySpec& spec, const topology::ParallelSizes& sizes,
                 const topology::RankOrder& order)
      : spec_(&spec), sizes_(sizes), order_(order) {}

  [[nodiscard]] std::vector<int> members(GroupKind kind) const {
    return topology::group_members_of(sizes_, order_, kind, 0);
  }
  // The group's GPUs on its compact cluster.
  const CompactGroup& compact(std::vector<int> members) { return entry(std::move(members)).group; }
  // A communicator over the whole group.
  const Communicator& communicator(std::vector<int> members) {
    Entry& e = entry(std::move(members));
    if (!e.comm) e.comm.emplace(e.group.topology(), e.group.gpus());
    return *e.comm;
  }

 private:
  struct Entry {
    Entry(const topology::TopologySpec& spec, std::vector<int> m) : members(std::move(m)), group(spec, members) {}
    std::vector<int> members;
    CompactGroup group;
    std::optional<Communicator> comm;
  };
  Entry& entry(std::vector<int> members) {
    for (int i = 0; i < used_; ++i) {
      if (entries_[static_cast<std::size_t>(i)]->members == members) return *entries_[static_cast<std::size_t>(i)];
    }
    MOFASIM_CHECK(used_ < static_cast<int>(entries_.size()), "more distinct groups than group kinds");
    return entries_[static_cast<std::size_t>(used_++)].emplace(*spec_, std::move(members));
  }

  const topology::TopologySpec* spec_;
  topology::ParallelSizes sizes_;
  topology::RankOrder order_;
  std::array<std::optional<Entry>, topology::kGroupKindCount + 1> entries_{};  // + the expert-TP prefix
  int used_ = 0;
};

struct Groups {
  const Communicator* tp;
  const Communicator* ep;
  const Communicator* etp;
  const Communicator* cp;
};

void price_block(AnalyticModel::Block& block, const Groups& g, int etp) {
  const auto comms = block.ops.comms();
  for (std::size_t j = 0; j < comms.size(); ++j) {
    const CommOp& c = comms[j];
    const CollectiveKind kind = to_topology(c.collective);
    switch (c.group) {
      case CommGroup::kTp: block.comm[j] = comm_cost(*g.tp, kind, c.bytes); break;
      case CommGroup::kEtp:
        MOFASIM_CHECK(c.group_size == etp, "expert-TP collective with a group size other than etp");
        block.comm[j] = comm_cost(*g.etp, kind, c.bytes);
        break;
      case CommGroup::kEp: block.comm[j] = comm_cost(*g.ep, kind, c.bytes); break;
      case CommGroup::kCp:
        // One ring step (every member sends its KV block to its successor at once): the same
        // collective kind, and so the same α and link loads, as the replay's CP step.
        block.comm[j] = comm_cost(*g.cp, CollectiveKind::kRingStep, c.bytes);
        break;
      case CommGroup::kPp: MOFASIM_UNREACHABLE("a layer carries no pipeline send/recv");
    }
  }
}

struct Ctx {
  const HardwareSpec& hw;
  const FeatureSpec& f;
  double inv_mub;
  int cp;
};

// MoFa(7) MoFa(8) for one block, with MoFa(17) MoFa(18) MoFa(19) MoFa(20) MoFa(21) MoFa(22) and, for
// transformer layers, MoFa(29) MoFa(30) MoFa(31) MoFa(32) MoFa(33) MoFa(34) MoFa(35).
LayerTime time_block(const AnalyticModel::Block& block, const Ctx& x, bool transformer_layer) {
  const auto ops = block.ops.ops();
  const auto comms = block.ops.comms();
  constexpr Phase kPhases[3] = {Phase::kForward, Phase::kBackwardInput, Phase::kBackwardWeight};
  std::array<std::array<double, kMaxOps>, 3> op_s{};
  std::array<PassTime, 3> pass{};
  std::array<double, 3> attention{};
  double selective = 0;
  for (int ph = 0; ph < 3; ++ph) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      // MoFa(1) MoFa(17) MoFa(19)
      const double s = phase_seconds(ops[i].phase(kPhases[ph]), ops[i].op_class, x.hw, x.f);
      op_s[static_cast<std::size_t>(ph)][i] = s;
      pass[static_cast<std::size_t>(ph)].compute += s;
      if (ops[i].op_class == OpClass::kAttention) attention[static_cast<std::size_t>(ph)] += s;
      if (ph == 0 && ops[i].recomputed_by_selective) {  // the part recompute_modules.h says it re-runs
        selective += ops[i].selective_recompute_fraction == 1
                         ? s
                         : phase_seconds(selective_recompute_cost(ops[i]), ops[i].op_class, x.hw, x.f);
      }
    }
  }
  std::array<std::uint32_t, 3> paired{};  // GEMMs already pipelined with a TP collective, per phase
  for (std::size_t j = 0; j < comms.size(); ++j) {
    const CommOp& c = comms[j];
    const auto ph = static_cast<std::size_t>(c.phase);
    PassTime& t = pass[ph];
    const double one = seconds(block.comm[j], x.inv_mub);  // MoFa(2) MoFa(3) MoFa(18)
    switch (c.group) {
      case CommGroup::kTp:
      case CommGroup::kEtp: {
        const double total = one * c.count;
        double extra = total;
        if (x.f.tp_overlap.enabled) {
          for (std::size_t i = 0; i < ops.size(); ++i) {
            const bool gemm = ops[i].op_class == OpClass::kGemm || ops[i].op_class == OpClass::kSmallGemm;
            if (ops[i].op != c.op || !gemm || op_s[ph][i] <= 0 || (paired[ph] >> i & 1U) != 0) continue;
            paired[ph] |= 1U << i;
            const double gemm_s = op_s[ph][i];
            // MoFa(20): the exposed part beyond the GEMM itself. The collective split into s
            // pieces is s collectives of 1/s of the bytes, each paying the full α latency, so the
            // comm side is s·α + β·S (C/s per piece = α + β·S/s).
            const int pieces = std::max(1, x.f.tp_overlap.chunks);
            const double split = c.count * (pieces * block.comm[j].latency + block.comm[j].bandwidth * x.inv_mub);
            extra = tp_overlap_seconds(gemm_s, split, pieces, x.f.tp_overlap.alpha, x.f.tp_overlap.beta) - gemm_s;
            break;
          }
        }
        t.tp += extra;
        break;
      }
      case CommGroup::kCp: {
        // MoFa(21): count = c-1 ring steps around the attention core of this phase.
        MOFASIM_CHECK(c.count == x.cp - 1, "CP ring with a step count other than cp - 1");
        const double a = attention[ph];
        t.cp += cp_ring_seconds(a, one, x.cp, x.f.cp_overlap.enabled, x.f.cp_overlap.alpha, x.f.cp_overlap.beta) - a;
        break;
      }
      case CommGroup::kEp:
        t.ep += one * c.count;
        t.a2a += one * c.count;
        break;
      case CommGroup::kPp: MOFASIM_UNREACHABLE("a layer carries no pipeline send/recv");
    }
  }
  LayerTime lt{pass[0], pass[1], pass[2]};
  if (!transformer_layer) return lt;

  const LayerTotals& totals = block.ops.totals();
  double stored = totals.activation_bytes;
  switch (x.f.recompute) {
    case RecomputeKind::kNone: break;
    case RecomputeKind::kSelective:  // MoFa(29) MoFa(30): re-run the attention part before B
      lt.b.compute += selective;
      stored -= totals.selective_dropped_bytes;
      break;
    case RecomputeKind::kFull:  // MoFa(31) MoFa(32): T_B += T_F,layer, its collectives included
      lt.b += lt.f;
      stored = totals.input_bytes;
      break;
  }
  const OverlapSpec& off = x.f.activation_offload;
  if (off.enabled) {
    // MoFa(33) MoFa(34) MoFa(35): the layer's stored activation goes D2H under the forward and comes
    // back H2D under the backward; the copy-bound excess is reported as compute.
    if (!(x.hw.d2h_bandwidth > 0) || !(x.hw.h2d_bandwidth > 0)) {
      throw std::invalid_argument("hardware.d2h_bandwidth and hardware.h2d_bandwidth must be > 0 with activation offload");
    }
    const double f_total = lt.f.total();
    lt.f.compute += offload_seconds(f_total, stored / x.hw.d2h_bandwidth, off.alpha, off.beta) - f_total;
    const double b_total = lt.b.total() + lt.w.total();
    lt.b.compute += offload_seconds(b_total, stored / x.hw.h2d_bandwidth, x.f.offload_alpha_backward,
                                    x.f.offload_beta_backward) -
                    b_total;
  }
  return lt;
}

// Scratch on the stack for up to kInline entries (the heap beyond that); the first n are
// value-initialised (zero for double).
template <typename T>
class InlineBuffer {
 public:
  static constexpr int kInline = 128;
  explicit InlineBuffer(int n) : n_(n) {
    if (n > kInline) {
      heap_.assign(static_cast<std::size_t>(n), T{});
    } else {
      std::fill_n(inline_.begin(), n, T{});
    }
  }
  T& operator[](int i) { return data()[i]; }
  const T& operator[](int i) const { return data()[i]; }

 private:
  [[nodiscard]] T* data() { return n_ > kInline ? heap_.data() : inline_.data(); }
  [[nodiscard]] const T* data() const { return n_ > kInline ? heap_.data() : inline_.data(); }
  int n_;
  std::array<T, kInline> inline_;  // NOLINT: only the first n_ are used, initialised above
  std::vector<T> heap_;
};
using StageBuffer = InlineBuffer<double>;  // per pipeline stage

// MoFa(9) MoFa(10) MoFa(11) MoFa(12), exact for per-stage pass costs: the replay of the 1F1B schedule
// (schedules/one_f_one_b.h: min(p−1−r, m) warm-up forwards on stage r, then F/B pairs, then the
// drain) with stage r's forward costing f[r] and its backward b[r], and `hop` seconds on every
// dependency between stages. Step i runs F(r, i) on every stage (top down) and then
// B(r, i − w_r) (bottom up, w_r the warm-up count), which is each stage's own order, so the
// state between steps is the end of each stage's last backward: `last_end[r]` on return (the
// pipeline's makespan is its maximum). O(p) memory; O(p·(p + transient)) time: once the steady
// steps repeat with one period on every stage (a max-plus system with constant costs), the rest
// of the steady phase is added in one go.
void one_f_one_b_stage_ends(int p, int m, const StageBuffer& f, const StageBuffer& b, double hop,
                            StageBuffer& last_end) {
  StageBuffer b_end_even(p);  // end of stage r's backward in the latest even / odd step
  StageBuffer b_end_odd(p);
  StageBuffer stage_free(p);  // end of the last op on stage r
  StageBuffer prev_free(p);
  auto warmup = [&](int r) { return std::min(p - 1 - r, m); };
  auto b_end_at = [&](int r, int step) -> double& { return (step & 1) != 0 ? b_end_odd[r] : b_end_even[r]; };
  const int last_step = m - 1 + warmup(0);
  for (int i = 0; i <= last_step; ++i) {
    if (i < m) {
      double prev_f = 0;
      for (int r = 0; r < p; ++r) {  // F(r, i) after F(r−1, i)
        const double start = std::max(stage_free[r], r > 0 ? prev_f + hop : 0.0);
        prev_f = start + f[r];
        stage_free[r] = prev_f;
      }
    }
    for (int r = p - 1; r >= 0; --r) {  // B(r, k) after B(r+1, k), which ran at step k + w_{r+1}
      const int k = i - warmup(r);
      if (k < 0 || k >= m) continue;
      const double after = r + 1 < p ? b_end_at(r + 1, k + warmup(r + 1)) + hop : 0.0;
      const double end = std::max(stage_free[r], after) + b[r];
      b_end_at(r, i) = end;
      stage_free[r] = end;
    }
    // Steady steps (every stage runs one F and one B) all apply the same max-plus map; when two
    // in a row advance every stage by the same period, so will the rest.
    const bool steady = i >= p && i + 1 < m;
    if (steady) {
      const double period = stage_free[0] - prev_free[0];
      bool periodic = true;
      for (int r = 1; r < p && periodic; ++r) {
        periodic = std::abs(stage_free[r] - prev_free[r] - period) <= 1e-12 * stage_free[r];
      }
      if (periodic) {
        const int skip = m - 2 - i;  // steady steps left after this one, minus the last
        for (int r = 0; r < p && skip > 0; ++r) {
          const double now = b_end_at(r, i) + skip * period;
          const double before = b_end_at(r, i - 1) + skip * period;
          b_end_at(r, i + skip) = now;
          b_end_at(r, i + skip - 1) = before;
          stage_free[r] += skip * period;
        }
        i += std::max(skip, 0);
      }
    }
    for (int r = 0; r < p; ++r) prev_free[r] = stage_free[r];
  }
  for (int r = 0; r < p; ++r) last_end[r] = stage_free[r];
}

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

}  // namespace

AnalyticModel::AnalyticModel(const AnalyticInput& input) : input_(input), hardware_(input.hardware) {
  const ModelSpec& model = input_.model;
  const ParallelSpec& par = input_.parallel;
  const FeatureSpec& feat = input_.features;
  hardware_.name.clear();
  validate_model(model);
  validate_parallel(model, par);
  input_.topology.validate();
  require(input_.topology.gpus == par.gpus(),
          "topology.gpus = " + std::to_string(input_.topology.gpus) + " but tp*cp*pp*dp = " +
              std::to_string(par.gpus()));
  require(par.micro_batch >= 1 && par.global_batch % (par.micro_batch * par.dp) == 0 && par.microbatches() >= 1,
          "parallel.global_batch must be a positive multiple of micro_batch*dp = " +
              std::to_string(par.micro_batch * par.dp));
  require(par.vpp == 1 || par.schedule == ScheduleKind::kInterleaved1F1B,
          "parallel.vpp > 1 needs schedule interleaved_1f1b, got vpp = " + std::to_string(par.vpp));
  require(!feat.tp_overlap.enabled || feat.tp_overlap.chunks >= 1, "features.tp_overlap.chunks must be >= 1");
  require(feat.bandwidth_scale > 0, "features.bandwidth_scale must be > 0");

  p_ = par.pp;
  m_ = par.microbatches();
  const bool dualpipe = par.schedule == ScheduleKind::kDualPipe;
  v_ = dualpipe ? 2 : par.vpp;

  // Rank 0's groups (rank r runs on GPU r), each priced on a cluster holding just its GPUs.
  require(par.etp == 1 || par.etp == par.tp || (par.etp < par.tp && par.tp % par.etp == 0),
          "parallel.etp must be 1 or divide tp, got " + std::to_string(par.etp));
  RankZeroGroups groups(input_.topology,
                        topology::ParallelSizes{.tp = par.tp, .cp = par.cp, .ep = par.ep, .dp = par.dp, .pp = par.pp},
                        input_.rank_order);
  std::vector<int> tp_members = groups.members(GroupKind::kTp);
  std::vector<int> etp_members(tp_members.begin(), tp_members.begin() + par.etp);
  const Groups g{.tp = &groups.communicator(std::move(tp_members)),
                 .ep = &groups.communicator(groups.members(GroupKind::kEp)),
                 .etp = &groups.communicator(std::move(etp_members)),
                 .cp = &groups.communicator(groups.members(GroupKind::kCp))};

  // Layer types and their collectives.
  for (int l = 0; l < model.num_layers && !(has_dense_ && has_moe_); ++l) {
    Block& b = model.is_moe_layer(l) ? moe_ : dense_;
    bool& has = model.is_moe_layer(l) ? has_moe_ : has_dense_;
    if (has) continue;
    b.ops = with_recompute_modules(ops_for_layer(model, par, l), model, par, feat.recompute_modules);
    price_block(b, g, par.etp);
    has = true;
  }
  embedding_.ops = ops_for_embedding(model, par);
  price_block(embedding_, g, par.etp);
  head_.ops = ops_for_head(model, par);
  price_block(head_, g, par.etp);
  if (model.mtp_depth > 0) {
    mtp_projection_.ops = ops_for_mtp_projection(model, par);
    price_block(mtp_projection_, g, par.etp);
  }

  // PP hop: the slowest boundary between consecutive virtual stages (wrapping for interleaved).
  const LayerOps pp = pp_boundary_comm(model, par);
  if (!pp.comms().empty()) {
    const CompactGroup& pp_group = groups.compact(groups.members(GroupKind::kPp));
    pp_hop_ = slowest_hop(pp_group.topology(), pp_group.gpus(), v_ > 1 && !dualpipe, pp.comms()[0].bytes);
  }

  // Chunks per rank.
  const std::vector<ChunkLayers> layout = chunk_layers(model, par);
  auto chunk_of = [&](const ChunkLayers& cl) {
    Chunk c;
    for (int l = cl.first_layer; l < cl.first_layer + cl.num_layers; ++l) {
      (model.is_moe_layer(l) ? c.moe_layers : c.dense_layers) += 1;
      if (feat.recompute == RecomputeKind::kFull && !full_recompute_applies(feat, l - cl.first_layer)) {
        (model.is_moe_layer(l) ? c.moe_kept : c.dense_kept) += 1;
      }
    }
    c.embedding = cl.chunk == 0;
    c.head = cl.chunk == static_cast<int>(layout.size()) - 1;
    return c;
  };
  pair_share_.assign(static_cast<std::size_t>(p_), 1.0);
  if (dualpipe && feat.ep_overlap.enabled) {
    // The warm-up and cool-down passes of DualPipe's order run alone: its EP all-to-all is
    // exposed there, as in the replay. Count the F&B pairs each stage actually runs (of m).
    const schedules::Schedule order = schedules::build_schedule(par.schedule, schedules::step_shape(model, par, feat));
    for (int r = 0; r < p_; ++r) {
      int pairs = 0;
      for (const schedules::Op& op : order.ops(r)) pairs += op.overlaps_next ? 1 : 0;
      pair_share_[static_cast<std::size_t>(r)] = static_cast<double>(pairs) / m_;
    }
  }
  chunks_.assign(static_cast<std::size_t>(p_ * v_), Chunk{});
  for (int r = 0; r < p_; ++r) {
    if (dualpipe) {  // stage r holds chunk r (lane 0) and chunk p-1-r (lane 1)
      chunks_[static_cast<std::size_t>(r * 2)] = chunk_of(layout[static_cast<std::size_t>(r)]);
      chunks_[static_cast<std::size_t>(r * 2 + 1)] = chunk_of(layout[static_cast<std::size_t>(p_ - 1 - r)]);
    } else {
      for (int k = 0; k < v_; ++k) {
        chunks_[static_cast<std::size_t>(r * v_ + k)] = chunk_of(layout[static_cast<std::size_t>(k * p_ + r)]);
      }
    }
  }

  // Memory (MoFa(4) MoFa(5) MoFa(6) MoFa(25) MoFa(26) MoFa(27) MoFa(28) MoFa(29) MoFa(30) MoFa(31) MoFa(32)
  // MoFa(33) MoFa(34) MoFa(35)) with the schedule's in-flight micro-batches per rank.
  const std::vector<double> inflight = schedules::stage_inflight_microbatches(model, par, feat);
  const bool last_moe = model.is_moe_layer(model.num_layers - 1);
  const MemoryOpTotals op_totals{.dense = has_dense_ ? dense_.ops.totals() : LayerTotals{},
                                 .moe = last_moe ? moe_.ops.totals() : dense_.ops.totals(),
                                 .embedding = embedding_.ops.totals(),
                                 .head = head_.ops.totals(),
                                 .mtp_projection = mtp_projection_.ops.totals()};
  memory_ = memory_report(model, input_.hardware, par, feat, inflight, op_totals);
  // DP reduction and optimizer per rank (MoFa(13) MoFa(24) MoFa(25) MoFa(26) MoFa(27) MoFa(28)).
  const BytesPerParam bpp = bytes_per_param(feat);
  const ShardGroups shards = optimizer_shard_groups(par);
  const Communicator& dense_dp = groups.communicator(groups.members(par.cp > 1 ? GroupKind::kDpCp : GroupKind::kDp));
  const Communicator& expert_dp = groups.communicator(groups.members(GroupKind::kExpertDp));
  const double bucket = feat.dp_bucket_bytes > 0 ? feat.dp_bucket_bytes : 0;
  auto bucketed = [&](const Communicator& group, CollectiveKind kind, double bytes) {
    if (bytes <= 0 || group.size() == 1) return CommCost{};
    const double buckets = bucket > 0 ? std::ceil(bytes / bucket) : 1;
    const CommCost whole = comm_cost(group, kind, bytes);
    return CommCost{whole.latency * buckets, whole.bandwidth};
  };
  auto add = [](CommCost a, CommCost b) { return CommCost{a.latency + b.latency, a.bandwidth + b.bandwidth}; };
  const bool distributed = feat.distributed_optimizer;
  dp_.assign(static_cast<std::size_t>(p_), RankDp{});
  for (int r = 0; r < p_; ++r) {
    const GpuParams& gp = memory_.stages[static_cast<std::size_t>(r)].params;
    const double dense = gp.dense();  // DualPipe's second copy is in gp (parameter_chunks)
    const double expert = gp.expert;
    RankDp& d = dp_[static_cast<std::size_t>(r)];
    if (distributed) {  // MoFa(25) MoFa(26): RS of gradients + AG of parameters
      d.grad = add(bucketed(dense_dp, CollectiveKind::kReduceScatter, dense * bpp.grad),
                   bucketed(expert_dp, CollectiveKind::kReduceScatter, expert * bpp.grad));
      d.params = add(bucketed(dense_dp, CollectiveKind::kAllGather, dense * bpp.weight),
                     bucketed(expert_dp, CollectiveKind::kAllGather, expert * bpp.weight));
    } else {
      d.grad = add(bucketed(dense_dp, CollectiveKind::kAllReduce, dense * bpp.grad),
                   bucketed(expert_dp, CollectiveKind::kAllReduce, expert * bpp.grad));
    }
    const double updated = distributed ? dense / shards.dense_dp + expert / shards.expert_dp : dense + expert;
    if (feat.optimizer_placement == OptimizerPlacement::kCpu) {  // MoFa(27) MoFa(28)
      d.cpu_params = updated;
      d.d2h_bytes = updated * bpp.grad;
      d.h2d_bytes = updated * bpp.weight;
    } else {
      // Adam reads the gradient, reads and writes master weights and moments, writes the weight.
      d.update_bytes = updated * (bpp.grad + 2 * bpp.optimizer() + bpp.weight);
    }
  }
  if (feat.optimizer_placement == OptimizerPlacement::kCpu) {
    require(input_.hardware.d2h_bandwidth > 0 && input_.hardware.h2d_bandwidth > 0 &&
                input_.hardware.cpu_optimizer_params_per_second > 0,
            "hardware.d2h_bandwidth, h2d_bandwidth and cpu_optimizer_params_per_second must be > 0 with the CPU "
            "optimizer");
  }

  model_flops_ = model_flops_per_step(model, par);
  hardware_flops_ = hardware_flops_per_step(model, par, feat);
  tokens_ = tokens_per_step(model, par);
  // Price once so that a bad hardware spec fails here, not in the hot path; evaluate() returns it.
  timing_ = time_step(rates());
}

RateKnobs AnalyticModel::rates() const {
  return RateKnobs{.efficiency = input_.hardware.efficiency,
                   .roofline_slope = input_.hardware.roofline_slope,
                   .roofline_intercept = input_.hardware.roofline_intercept,
                   .compute_scale = input_.features.compute_scale,
                   .bandwidth_scale = input_.features.bandwidth_scale};
}

StepTiming AnalyticModel::time_step(const RateKnobs& knobs) const {
  if (!(knobs.bandwidth_scale > 0)) throw std::invalid_argument("bandwidth_scale must be > 0");
  HardwareSpec hw = hardware_;
  hw.efficiency = knobs.efficiency;
  hw.roofline_slope = knobs.roofline_slope;
  hw.roofline_intercept = knobs.roofline_intercept;
  FeatureSpec f = input_.features;
  f.compute_scale = knobs.compute_scale;
  const Ctx x{.hw = hw, .f = f, .inv_mub = 1.0 / knobs.bandwidth_scale, .cp = input_.parallel.cp};
  const ScheduleKind kind = input_.parallel.schedule;

  const LayerTime dense = has_dense_ ? time_block(dense_, x, true) : LayerTime{};
  const LayerTime moe = has_moe_ ? time_block(moe_, x, true) : LayerTime{};
  // Layers full recompute leaves out (recompute_method block) run without recompute.
  FeatureSpec kept_features = f;
  kept_features.recompute = RecomputeKind::kNone;
  const Ctx kept_ctx{.hw = hw, .f = kept_features, .inv_mub = x.inv_mub, .cp = x.cp};
  const LayerTime dense_kept = has_dense_ ? time_block(dense_, kept_ctx, true) : LayerTime{};
  const LayerTime moe_kept = has_moe_ ? time_block(moe_, kept_ctx, true) : LayerTime{};
  const LayerTime emb = time_block(embedding_, x, false);
  LayerTime head = time_block(head_, x, false);
  if (input_.model.mtp_depth > 0) {
    // Each MTP module: a layer of the last layer's type, its eh projection and its own head.
    LayerTime mtp = input_.model.is_moe_layer(input_.model.num_layers - 1) ? moe : dense;
    mtp += time_block(mtp_projection_, x, false);
    mtp += time_block(head_, x, false);
    head += scaled(input_.model.mtp_depth, mtp);
  }

  // EP overlap (MoFa(22)): a steady forward+backward pair of one MoE layer, minus running them apart.
  const ScheduleKind k = kind;
  const bool pairs = k != ScheduleKind::kGpipe;
  double moe_pair_delta = 0;
  if (f.ep_overlap.enabled && pairs && has_moe_) {
    const PassTime fb = moe.f;
    const PassTime bb = moe.backward();
    moe_pair_delta = ep_pair_seconds(fb.total() - fb.a2a, fb.a2a, bb.total() - bb.a2a, bb.a2a, f.ep_overlap.alpha,
                                     f.ep_overlap.beta) -
                     (fb.total() + bb.total());
  }
  const double t_pp = seconds(pp_hop_, x.inv_mub);

  struct ChunkTime {
    LayerTime t;
    double pair = 0;      // steady F+B pair, EP overlap applied
    double ep_delta = 0;  // pair - (F + B)
    double pp_extra = 0;  // steady PP exposure of the pair, MoFa(23)
  };
  auto chunk_time = [&](const Chunk& c, double pair_share) {
    ChunkTime ct;
    ct.t = scaled(c.dense_layers - c.dense_kept, dense);
    ct.t += scaled(c.moe_layers - c.moe_kept, moe);
    ct.t += scaled(c.dense_kept, dense_kept);
    ct.t += scaled(c.moe_kept, moe_kept);
    if (c.embedding) ct.t += emb;
    if (c.head) ct.t += head;
    const double fwd = ct.t.f.total();
    const double bwd = ct.t.backward().total();
    ct.ep_delta = c.moe_layers * moe_pair_delta * pair_share;  // MoFa(22) on the overlapped pairs only
    ct.pair = fwd + bwd + ct.ep_delta;
    if (p_ > 1) {
      if (!f.pp_overlap.enabled) {
        ct.pp_extra = 2 * t_pp;  // each pass waits for its send
      } else if (ct.ep_delta != 0) {
        ct.pp_extra = pp_overlap_seconds(ct.pair, 2 * t_pp, f.pp_overlap.alpha, f.pp_overlap.beta) - ct.pair;
      } else {
        ct.pp_extra = pp_overlap_seconds(fwd, t_pp, f.pp_overlap.alpha, f.pp_overlap.beta) +
                      pp_overlap_seconds(bwd, t_pp, f.pp_overlap.alpha, f.pp_overlap.beta) - fwd - bwd;
      }
    }
    return ct;
  };
  // Every chunk's times, once: [rank * v + local chunk].
  InlineBuffer<ChunkTime> chunk_times(p_ * v_);
  for (int i = 0; i < p_ * v_; ++i) {
    chunk_times[i] = chunk_time(chunks_[static_cast<std::size_t>(i)], pair_share_[static_cast<std::size_t>(i / v_)]);
  }

  // Busiest rank: the largest steady busy time.
  const double mb_per_chunk = k == ScheduleKind::kDualPipe ? m_ / 2.0 : m_;
  int busiest = 0;
  double busiest_busy = -1;
  for (int r = 0; r < p_; ++r) {
    double busy = 0;
    for (int c = 0; c < v_; ++c) {
      const ChunkTime& ct = chunk_times[r * v_ + c];
      busy += mb_per_chunk * (ct.pair + ct.pp_extra);
    }
    if (busy > busiest_busy) {
      busiest_busy = busy;
      busiest = r;
    }
  }
  StepTiming out;
  StepBreakdown& bd = out.breakdown;
  LayerTime rank_sum;  // one micro-batch through every chunk of the busiest rank
  double rank_pair = 0;
  for (int c = 0; c < v_; ++c) {
    const ChunkTime& ct = chunk_times[busiest * v_ + c];
    rank_sum += ct.t;
    rank_pair += ct.pair;
    bd.ep_exposed += mb_per_chunk * ct.ep_delta;
    bd.pp_exposed += mb_per_chunk * ct.pp_extra;
  }
  const PassTime rank_b = rank_sum.backward();
  bd.compute += mb_per_chunk * (rank_sum.f.compute + rank_b.compute);
  bd.tp_exposed += mb_per_chunk * (rank_sum.f.tp + rank_b.tp);
  bd.cp_exposed += mb_per_chunk * (rank_sum.f.cp + rank_b.cp);
  bd.ep_exposed += mb_per_chunk * (rank_sum.f.ep + rank_b.ep);
  out.steady_s = busiest_busy;
  out.forward_chunk_s = rank_sum.f.total() / v_;
  out.backward_chunk_s = rank_b.total() / v_;

  const double hops = 2.0 * (p_ - 1) * t_pp;  // warm-up and cool-down hops, exposed
  // Each rank's pass costs as the replays below see them: a blocking send is part of its pass
  // (and the receiver has the data when the pass ends); with PP overlap a pass costs MoFa(23) and
  // the data arrives one hop after it.
  const bool blocking = !f.pp_overlap.enabled;
  const double edge = p_ > 1 && !blocking ? t_pp : 0.0;
  StageBuffer pass_f(p_);  // [rank], first local chunk
  StageBuffer pass_b(p_);
  for (int r = 0; r < p_; ++r) {
    const LayerTime& t = chunk_times[r * v_].t;
    const double fwd = t.f.total();
    const double bwd = t.backward().total();
    const bool sends = p_ > 1;
    pass_f[r] = !sends ? fwd : blocking ? fwd + t_pp : pp_overlap_seconds(fwd, t_pp, f.pp_overlap.alpha, f.pp_overlap.beta);
    pass_b[r] = !sends ? bwd : blocking ? bwd + t_pp : pp_overlap_seconds(bwd, t_pp, f.pp_overlap.alpha, f.pp_overlap.beta);
  }
  // End of each rank's last pass, from the step's start: where its DP reduction and update begin.
  StageBuffer last_end(p_);
  const bool replay_1f1b = k == ScheduleKind::k1F1B && moe_pair_delta == 0;
  const bool gpipe = k == ScheduleKind::kGpipe;
  if (replay_1f1b || gpipe) {
    if (replay_1f1b) {
      one_f_one_b_stage_ends(p_, m_, pass_f, pass_b, edge, last_end);
    } else {
      // GPipe: m forwards then m backwards per stage, each phase a flow shop of identical jobs,
      // whose makespan over stages j..p−1 is Σ_j T + (m − 1)·max_j T (plus a hop per boundary).
      // The backwards start on the last stage when its last forward ends (every other stage
      // finished its forwards earlier) and run back up to stage 0.
      double forwards = (p_ - 1) * edge;
      double slowest_f = 0;
      for (int r = 0; r < p_; ++r) {
        forwards += pass_f[r];
        slowest_f = std::max(slowest_f, pass_f[r]);
      }
      forwards += (m_ - 1) * slowest_f;
      double below = 0;  // Σ_{j≥r} B_j
      double slowest_b = 0;
      for (int r = p_ - 1; r >= 0; --r) {
        below += pass_b[r];
        slowest_b = std::max(slowest_b, pass_b[r]);
        last_end[r] = forwards + below + (p_ - 1 - r) * edge + (m_ - 1) * slowest_b;
      }
    }
    double pipeline = 0;
    for (int r = 0; r < p_; ++r) pipeline = std::max(pipeline, last_end[r]);
    const double idle = pipeline - busiest_busy;
    const double exposed_hops = std::clamp(hops, 0.0, std::max(idle, 0.0));
    bd.pp_exposed += exposed_hops;
    bd.pp_bubble = idle - exposed_hops;
    out.pipeline_s = pipeline;
    if (replay_1f1b) {  // MoFa(9): the first micro-batch's forward down to the busiest rank
      for (int j = 0; j < busiest; ++j) out.warmup_s += pass_f[j] + edge;
      out.cooldown_s = pipeline - busiest_busy - out.warmup_s;
    }
  } else {
    if (k == ScheduleKind::k1F1B || k == ScheduleKind::kInterleaved1F1B) {
      // MoFa(9) MoFa(10) MoFa(11) MoFa(12): the first micro-batch's forward down virtual stages 0..p-2, the steady
      // pairs of the busiest rank, the last micro-batch's backward back up through p-2..0.
      double warm = 0;
      double cool = 0;
      for (int j = 0; j + 1 < p_; ++j) {  // virtual stage j: rank j, its first local chunk
        const ChunkTime& ct = chunk_times[j * v_];
        warm += ct.t.f.total();
        cool += ct.t.backward().total();
      }
      out.warmup_s = warm + (p_ - 1) * t_pp;
      out.cooldown_s = cool + (p_ - 1) * t_pp;
      bd.pp_bubble = warm + cool;
    } else {
      // Other schedules: busy + the schedule's closed-form bubble (per full stage) + exposed hops.
      const double stage_chunks = k == ScheduleKind::kDualPipe ? 2.0 : 1.0;
      const schedules::PassTimes times{.forward = rank_sum.f.total() / stage_chunks,
                                       .input_grad = rank_sum.b.total() / stage_chunks,
                                       .weight_grad = rank_sum.w.total() / stage_chunks};
      const schedules::PipelineShape shape{.stages = p_, .microbatches = m_, .chunks = 1};
      if (k == ScheduleKind::kDualPipe) {
        const double pair = f.ep_overlap.enabled ? rank_pair / stage_chunks : -1;
        bd.pp_bubble = schedules::dualpipe_bubble(shape, times, pair);
      } else {
        bd.pp_bubble = schedules::bubble_time(k, shape, times);
      }
    }
    bd.pp_exposed += hops;
    out.pipeline_s = busiest_busy + bd.pp_bubble + hops;  // MoFa(12)
    // Where each rank's last pass ends: 1F1B-family schedules drain through the first chunks,
    // rank r finishing Σ_{j<r} (B_j + hop) before rank 0 (an upper bound when the drain waits);
    // ZB-H1 and DualPipe end every rank together.
    const bool drains = k == ScheduleKind::k1F1B || k == ScheduleKind::kInterleaved1F1B;
    double before = 0;
    for (int r = 0; r < p_; ++r) {
      last_end[r] = out.pipeline_s - before;
      if (drains) before += pass_b[r] + edge;
    }
  }

  // Optimizer (MoFa(13) MoFa(24) MoFa(25) MoFa(26) MoFa(27) MoFa(28)): each rank reduces and updates after its
  // own last pass; the step ends with the last rank to finish (MoFa(14)).
  const int mb_group = std::min(m_, p_);
  double step = -1;
  double tail_update = 0;
  double last_update_bytes = -1;
  double last_update_s = 0;
  for (int r = 0; r < p_; ++r) {
    const RankDp& d = dp_[static_cast<std::size_t>(r)];
    const double grad = seconds(d.grad, x.inv_mub);
    const double params = seconds(d.params, x.inv_mub);
    double exposed = grad + params;
    if (f.dp_overlap.enabled && v_ > 1) {
      LayerTime per;  // mean chunk of rank r
      for (int c = 0; c < v_; ++c) per += chunk_times[r * v_ + c].t;
      const double bwd = mb_group * per.backward().total() / v_;
      const double fwd = mb_group * per.f.total() / v_;
      exposed = dp_overlap_exposed_seconds(grad / v_, bwd, v_, f.dp_overlap.alpha, f.dp_overlap.beta) +
                dp_overlap_exposed_seconds(params / v_, fwd, v_, f.dp_overlap.alpha, f.dp_overlap.beta);
    }
    double update = 0;
    if (f.optimizer_placement == OptimizerPlacement::kCpu) {  // MoFa(28)
      update = d.d2h_bytes / hw.d2h_bandwidth + d.cpu_params / hw.cpu_optimizer_params_per_second +
               d.h2d_bytes / hw.h2d_bandwidth;
    } else if (d.update_bytes > 0) {  // MoFa(13) MoFa(26): memory-bound Adam
      if (d.update_bytes != last_update_bytes) {  // ranks laid out alike update the same bytes
        last_update_bytes = d.update_bytes;
        last_update_s = phase_seconds(PhaseCost{0, d.update_bytes}, OpClass::kElementwise, hw, f);
      }
      update = last_update_s;
    }
    if (last_end[r] + exposed + update > step) {
      step = last_end[r] + exposed + update;
      tail_update = update;
    }
  }
  // What runs after the pipeline's end: the update last, the DP reduction before it.
  step = std::max(step, out.pipeline_s);
  out.optimizer_s = step - out.pipeline_s;
  bd.optimizer = std::min(tail_update, out.optimizer_s);
  bd.dp_exposed = out.optimizer_s - bd.optimizer;
  out.step_time_s = step;  // MoFa(14)

  const double gpus = input_.parallel.gpus();
  const double peak = peak_flops(hw, f.compute_dtype);
  out.tflops_per_gpu = model_flops_ / (out.step_time_s * gpus) / 1e12;  // MoFa(15)
  out.mfu = model_flops_ / (out.step_time_s * gpus * peak);
  out.hfu = hardware_flops_ / (out.step_time_s * gpus * peak);
  out.tokens_per_s = tokens_ / out.step_time_s;
  return out;
}

namespace {

AnalyticResult make_result(const StepTiming& timing, MemoryReport memory) {
  AnalyticResult r{.timing = timing, .memory = std::move(memory), .fits = true, .memory_excess_bytes = 0};
  r.fits = r.memory.fits();
  if (!r.fits) {
    for (const StageMemory& s : r.memory.stages) r.memory_excess_bytes = std::max(r.memory_excess_bytes, s.excess_bytes);
  }
  return r;
}

}  // namespace

AnalyticResult AnalyticModel::evaluate() const& { return make_result(timing_, memory_); }

AnalyticResult AnalyticModel::evaluate() && { return make_result(timing_, std::move(memory_)); }

AnalyticResult evaluate_mofa(const AnalyticInput& input) { return AnalyticModel(input).evaluate(); }

}  // namespace mofasim::model
