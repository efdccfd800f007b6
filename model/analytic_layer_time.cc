// The closed form's layer term (see analytic_layer_time.h for what it reads).
#include "model/analytic_layer_time.h"

#include <array>
#include <cstdint>
#include <stdexcept>

#include "model/analytic_overlap.h"
#include "model/compute_time.h"
#include "model/recompute_modules.h"
#include "sim/units/check.h"

namespace mofasim::model {

namespace {

// `seconds` of a collective of `group` that selective recompute runs again, as a pass reports it.
// Its EP time is not a2a: the re-run sits in the recompute ahead of the backward, which the 1F1B
// EP-overlap pairing (MoFa(22), ep_pair_seconds) does not lay under the paired forward's compute;
// the replay runs it there as well.
void add_rerun_seconds(PassTime& t, LayerGroup group, double seconds) {
  switch (group) {
    case LayerGroup::kTp:
    case LayerGroup::kEtp: t.tp += seconds; return;
    case LayerGroup::kCp: t.cp += seconds; return;
    case LayerGroup::kEp:
    case LayerGroup::kEtpEp: t.ep += seconds; return;
    case LayerGroup::kPp: MOFASIM_UNREACHABLE("a layer carries no pipeline send/recv");
  }
  MOFASIM_UNREACHABLE("unknown layer group");
}

}  // namespace

// MoFa(7) MoFa(8) for one block, with MoFa(17) MoFa(18) MoFa(19) MoFa(20) MoFa(21) MoFa(22) and, for
// transformer layers, MoFa(29) MoFa(30) MoFa(31) MoFa(32) MoFa(33) MoFa(34) MoFa(35).
LayerTime time_block(const PlanBlock& block, const LayerRates& x, bool transformer_layer) {
  const auto ops = block.ops.ops();
  const auto comms = block.ops.comms();
  constexpr Phase kPhases[3] = {Phase::kForward, Phase::kInputGrad, Phase::kWeightGrad};
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
  PassTime rerun;  // forward collectives selective recompute runs again, each as it is (not overlapped)
  for (std::size_t j = 0; j < comms.size(); ++j) {
    const CommOp& c = comms[j];
    const auto ph = static_cast<std::size_t>(c.phase);
    PassTime& t = pass[ph];
    const double one = comm_seconds(block.comm[j], x.inv_mub);  // MoFa(2) MoFa(3) MoFa(18)
    if (c.recomputed_by_selective) add_rerun_seconds(rerun, c.group, one * c.count);
    switch (c.group) {
      case LayerGroup::kTp:
      case LayerGroup::kEtp: {
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
      case LayerGroup::kCp: {
        if (c.collective != CollectiveKind::kSendRecv) {  // cp_comm_type all_gather / a2a: not overlapped
          t.cp += one * c.count;
          break;
        }
        // MoFa(21): count = c-1 ring steps around the attention core of this phase.
        MOFASIM_CHECK(c.count == x.cp - 1, "CP ring with a step count other than cp - 1");
        const double a = attention[ph];
        t.cp += cp_ring_seconds(a, one, x.cp, x.f.cp_overlap.enabled, x.f.cp_overlap.alpha, x.f.cp_overlap.beta) - a;
        break;
      }
      case LayerGroup::kEp:
      case LayerGroup::kEtpEp:
        t.ep += one * c.count;
        t.a2a += one * c.count;
        break;
      case LayerGroup::kPp: MOFASIM_UNREACHABLE("a layer carries no pipeline send/recv");
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
      lt.b += rerun;
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

EpPairParts ep_pair_parts(const PlanBlock& block, const LayerRates& x, const LayerTime& t) {
  const auto ops = block.ops.ops();
  std::size_t fc1 = ops.size();
  std::size_t fc2 = ops.size();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].op == OpKind::kExpertLinear1) fc1 = i;
    if (ops[i].op == OpKind::kExpertLinear2) fc2 = i;
  }
  MOFASIM_CHECK(fc1 <= fc2 && fc2 < ops.size(), "ep_pair_parts: a MoE layer without routed experts");
  EpPairParts p;
  auto module = [&](std::size_t i, double& pre, double& mid, double& post) -> double& {
    return i < fc1 ? pre : i <= fc2 ? mid : post;
  };
  const bool full = x.f.recompute == RecomputeKind::kFull;
  const bool selective = x.f.recompute == RecomputeKind::kSelective;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const double fwd = phase_seconds(ops[i].forward, ops[i].op_class, x.hw, x.f);
    module(i, p.f_pre, p.f_mid, p.f_post) += fwd;
    // The backward module holding op i: its B and W passes and what recompute re-runs of it.
    double bwd = phase_seconds(ops[i].backward_input, ops[i].op_class, x.hw, x.f) +
                 phase_seconds(ops[i].backward_weight, ops[i].op_class, x.hw, x.f);
    if (full) bwd += fwd;
    if (selective && ops[i].recomputed_by_selective) {
      bwd += ops[i].selective_recompute_fraction == 1
                 ? fwd
                 : phase_seconds(selective_recompute_cost(ops[i]), ops[i].op_class, x.hw, x.f);
    }
    module(i, p.b_last, p.b_mid, p.b_first) += bwd;
  }
  const auto comms = block.ops.comms();
  for (std::size_t j = 0; j < comms.size(); ++j) {
    const CommOp& c = comms[j];
    if (c.group != LayerGroup::kEp && c.group != LayerGroup::kEtpEp) continue;
    const double s = comm_seconds(block.comm[j], x.inv_mub) * c.count;
    const bool dispatch_side = c.op == OpKind::kExpertLinear1;
    if (c.phase == Phase::kForward) (dispatch_side ? p.f_dispatch : p.f_combine) += s;
    else (dispatch_side ? p.b_dispatch : p.b_combine) += s;
    // re-run forward (full recompute, or selective when its module re-runs the collective)
    if ((full || (selective && c.recomputed_by_selective)) && c.phase == Phase::kForward) {
      (dispatch_side ? p.b_dispatch : p.b_combine) += s;
    }
  }
  // The rest of each pass (exposed TP / CP / FSDP, offload) outside the windows.
  const double f_parts = p.f_pre + p.f_mid + p.f_post + p.f_dispatch + p.f_combine;
  const double b_parts = p.b_first + p.b_mid + p.b_last + p.b_dispatch + p.b_combine;
  p.f_post += t.f.total() - f_parts;
  p.b_first += t.backward().total() - b_parts;
  return p;
}

}  // namespace mofasim::model
