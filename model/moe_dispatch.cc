// The EP and expert-TP collectives of a MoE layer per token dispatcher (see moe_dispatch.h).
#include "model/moe_dispatch.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "model/moe_deepep.h"

namespace mofasim::model {
namespace {

constexpr double kAct = 2;  // bytes per bf16 activation element

std::string num(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// A collective whose wire bytes follow from its kind over n members (AG/RS/A2A: (n−1)/n·S).
void add_uniform(LayerOps& ops, CollectiveKind kind, LayerGroup group, int n, Phase phase, OpKind op, bool before,
                 double bytes) {
  add_comm_op(ops, kind, group, n, phase, op, before, bytes, bytes * (n - 1) / std::max(n, 1));
}

// Where a transfer sits in the layer: before fc1 (dispatch, forward; combine's gradient, backward:
// fc2's backward comes first) or after fc2 (combine, forward; dispatch's gradient after fc1's
// backward).
struct Slot {
  Phase phase;
  OpKind op;
  bool before;
  bool toward_experts;  // dispatch direction: tokens go to the experts
};

// DeepEP's two hops over the dispatcher's group (Megatron's tp_ep group, `group` = ep·etp ranks
// over `nodes` nodes): toward the experts the node copy crosses the NIC first and is then forwarded
// inside the node; back from them the node's copies are reduced first and then sent home. The
// second runs at once with the first, pipelined over `chunks` chunks (moe_deepep.h): it names the
// first by its index (CommOp::pipelined_with), so the pair does not depend on list order.
void add_flex(LayerOps& ops, const Slot& at, LayerGroup on, int group, int nodes, double node_copy_bytes,
              double expert_copy_bytes, double chunks) {
  const int per_node = std::max(group / nodes, 1);
  auto scale_out = [&](int with, double pipelined) {
    if (nodes <= 1) return -1;
    return add_comm_op(ops, CollectiveKind::kAllToAllScaleOut, on, group, at.phase, at.op, at.before,
                       node_copy_bytes, node_copy_bytes * (nodes - 1) / nodes, 1, with, pipelined);
  };
  auto scale_up = [&](int with, double pipelined) {
    if (per_node <= 1) return -1;
    return add_comm_op(ops, CollectiveKind::kAllToAllScaleUp, on, group, at.phase, at.op, at.before,
                       expert_copy_bytes, expert_copy_bytes * (per_node - 1) / per_node, 1, with, pipelined);
  };
  // The second hop pairs with the first only when both run (more than one node, more than one
  // member per node).
  auto second = [&](int first, auto&& hop) { (void)hop(first, first >= 0 ? chunks : 0); };
  if (at.toward_experts) {
    second(scale_out(-1, 0), scale_up);
  } else {
    second(scale_up(-1, 0), scale_out);
  }
}

}  // namespace

double routed_token_factor(const MoeSpec& moe, int ep) {
  const double dropless = ep > 1 ? moe.load_imbalance : 1.0;
  if (moe.expert_capacity_factor <= 0) return dropless;
  if (moe.pad_expert_input_to_capacity) return moe.expert_capacity_factor;
  return std::min(dropless, moe.expert_capacity_factor);
}

namespace {

// The group's ep expert slots (each an expert-TP group of etp ranks) over its nodes: a slot wider
// than a node spans `span` nodes, and a token routed to it reaches every one of them.
struct SlotNodes {
  int slot_nodes = 1;      // nodes the slots occupy as units
  double span = 1;         // nodes one such unit is
  double reachable = 1;    // of slot_nodes, those the node limit lets one token reach
};
SlotNodes slot_nodes_of(const MoeSpec& moe, int ep, int group_nodes) {
  const int nodes = group_nodes > 0 ? group_nodes : ep;
  SlotNodes n;
  n.slot_nodes = std::min(nodes, std::max(ep, 1));
  n.span = static_cast<double>(nodes) / n.slot_nodes;
  n.reachable = n.slot_nodes;
  if (moe.router_num_groups > 0 && moe.router_group_topk > 0) {
    const double nodes_per_group = std::ceil(static_cast<double>(n.slot_nodes) / moe.router_num_groups);
    n.reachable = std::min(n.reachable, moe.router_group_topk * nodes_per_group);
  }
  return n;
}

// A token's k experts are k distinct ones among the E_r it may reach, spread evenly over `units`
// units (nodes, expert slots): each unit is missed with probability C(E_r − e, k) / C(E_r, k)
// (e = E_r / units), so they hit units·(1 − Π_{i<k} (E_r − e − i) / (E_r − i)).
double distinct_units(double units, double reachable_experts, int k) {
  const double e = reachable_experts / units;
  double missed = 1;
  for (int i = 0; i < k && missed > 0; ++i) missed *= std::max(0.0, reachable_experts - e - i) / (reachable_experts - i);
  return units * (1 - missed);
}

// The experts a token may reach: router_group_topk of the router_num_groups groups, or all.
double reachable_experts(const MoeSpec& moe) {
  if (moe.router_num_groups > 0 && moe.router_group_topk > 0) {
    return static_cast<double>(moe.num_experts) * std::min(1.0, static_cast<double>(moe.router_group_topk) / moe.router_num_groups);
  }
  return moe.num_experts;
}

}  // namespace

double dispatch_nodes_per_token(const MoeSpec& moe, int ep, int group_nodes) {
  const SlotNodes n = slot_nodes_of(moe, ep, group_nodes);
  return n.span * distinct_units(n.reachable, reachable_experts(moe), moe.top_k);
}

double dispatch_slots_per_token(const MoeSpec& moe, int ep) {
  if (ep <= 1) return 1;
  // Node-limited routing: the groups are runs of experts, as the slots are, so a token reaches
  // router_group_topk · ceil(ep / router_num_groups) slots at most (one group a slot when the
  // groups are narrower than a slot).
  double slots = ep;
  if (moe.router_num_groups > 0 && moe.router_group_topk > 0) {
    slots = std::min<double>(ep, moe.router_group_topk * std::ceil(static_cast<double>(ep) / moe.router_num_groups));
  }
  return distinct_units(slots, reachable_experts(moe), moe.top_k);
}

void validate_moe_routing(const MoeSpec& moe) {
  const std::string q = "model.moe.";
  if (moe.router_num_groups < 0 || moe.router_group_topk < 0) {
    throw std::invalid_argument(q + "router_num_groups and router_group_topk must be >= 0");
  }
  if (moe.router_group_topk > 0 && moe.router_num_groups == 0) {
    throw std::invalid_argument(q + "router_group_topk needs router_num_groups (the expert groups it picks from)");
  }
  if (moe.router_num_groups > 0) {
    if (moe.num_experts % moe.router_num_groups != 0) {
      throw std::invalid_argument(q + "router_num_groups (" + std::to_string(moe.router_num_groups) +
                                  ") must divide num_experts (" + std::to_string(moe.num_experts) + ")");
    }
    if (moe.router_group_topk < 1 || moe.router_group_topk > moe.router_num_groups) {
      throw std::invalid_argument(q + "router_group_topk must be in [1, router_num_groups = " +
                                  std::to_string(moe.router_num_groups) + "], got " +
                                  std::to_string(moe.router_group_topk));
    }
    if (moe.router_group_topk > moe.top_k) {
      throw std::invalid_argument(q + "router_group_topk (" + std::to_string(moe.router_group_topk) +
                                  ") exceeds top_k (" + std::to_string(moe.top_k) +
                                  "): a token cannot use more groups than experts");
    }
  }
  if (moe.expert_capacity_factor < 0 || !std::isfinite(moe.expert_capacity_factor)) {
    throw std::invalid_argument(q + "expert_capacity_factor must be > 0 (0 = dropless), got " +
                                num(moe.expert_capacity_factor));
  }
  if (moe.pad_expert_input_to_capacity && moe.expert_capacity_factor <= 0) {
    throw std::invalid_argument(q + "pad_expert_input_to_capacity needs expert_capacity_factor (the capacity to pad to)");
  }
  if (moe.pad_expert_input_to_capacity && moe.token_dispatcher == MoeDispatcher::kFlex) {
    throw std::invalid_argument(q + "pad_expert_input_to_capacity is not modelled with token_dispatcher_type flex");
  }
}

void validate_moe_parallel(const ModelSpec& model, const ParallelSpec& parallel) {
  if (!model.is_moe()) return;
  const long folded = static_cast<long>(parallel.tp) * parallel.cp * parallel.dp;
  const long expert_group = static_cast<long>(parallel.ep) * parallel.etp;
  if (folded % expert_group != 0) {
    throw std::invalid_argument("parallel: ep*etp (" + std::to_string(expert_group) + ") must divide tp*cp*dp (" +
                                std::to_string(folded) + "): the expert layout folds over those ranks");
  }
}

double tokens_sorted_by_local_expert(const MoeSpec& moe, const ParallelSpec& parallel, double tokens_moe) {
  if (moe.token_dispatcher != MoeDispatcher::kAllToAll || moe.num_experts / parallel.ep <= 1) return 0;
  if (moe.pad_expert_input_to_capacity && parallel.ep * parallel.etp == 1) return 0;
  return tokens_moe * moe.top_k * parallel.etp * routed_token_factor(moe, parallel.ep);
}

void add_moe_collectives(LayerOps& ops, const ModelSpec& model, const ParallelSpec& parallel, double tokens_moe,
                         double routed_tokens) {
  const MoeSpec& moe = model.moe;
  const int ep = parallel.ep;
  const double h = model.hidden_size;
  const double f = routed_token_factor(moe, ep);
  const double bd = moe.dispatch_bytes_per_element;
  const double bc = moe.combine_bytes_per_element;
  const Slot dispatch{Phase::kForward, OpKind::kExpertLinear1, true, true};
  const Slot combine{Phase::kForward, OpKind::kExpertLinear2, false, false};
  const Slot combine_grad{Phase::kInputGrad, OpKind::kExpertLinear2, true, true};
  const Slot dispatch_grad{Phase::kInputGrad, OpKind::kExpertLinear1, false, false};
  switch (moe.token_dispatcher) {
    case MoeDispatcher::kAllToAll: {
      // The busiest rank's receive side bounds a pairwise all-to-all, so its volume scales with f.
      const double copies = tokens_moe * moe.top_k * h * f;
      add_uniform(ops, CollectiveKind::kAllToAll, LayerGroup::kEp, ep, dispatch.phase, dispatch.op, dispatch.before, copies * bd);
      add_uniform(ops, CollectiveKind::kAllToAll, LayerGroup::kEp, ep, combine.phase, combine.op, combine.before, copies * bc);
      add_uniform(ops, CollectiveKind::kAllToAll, LayerGroup::kEp, ep, combine_grad.phase, combine_grad.op,
                  combine_grad.before, copies * bc);
      add_uniform(ops, CollectiveKind::kAllToAll, LayerGroup::kEp, ep, dispatch_grad.phase, dispatch_grad.op,
                  dispatch_grad.before, copies * bc);
      break;
    }
    case MoeDispatcher::kAllGather: {
      // Megatron's MoEAllGatherTokenDispatcher gathers over the ETP×EP group (tp_ep_group): every
      // rank of it ends up with the group's tokens, so no expert-TP gather follows.
      const int n = ep * parallel.etp;
      const double group_tokens = n * tokens_moe * h;
      add_uniform(ops, CollectiveKind::kAllGather, LayerGroup::kEtpEp, n, dispatch.phase, dispatch.op, dispatch.before,
                  group_tokens * bd);
      add_uniform(ops, CollectiveKind::kReduceScatter, LayerGroup::kEtpEp, n, combine.phase, combine.op, combine.before,
                  group_tokens * bc);
      add_uniform(ops, CollectiveKind::kAllGather, LayerGroup::kEtpEp, n, combine_grad.phase, combine_grad.op,
                  combine_grad.before, group_tokens * bc);
      add_uniform(ops, CollectiveKind::kReduceScatter, LayerGroup::kEtpEp, n, dispatch_grad.phase, dispatch_grad.op,
                  dispatch_grad.before, group_tokens * bc);
      return;
    }
    case MoeDispatcher::kFlex: {
      // Megatron's MoEFlexTokenDispatcher runs DeepEP over the tp_ep group (ep·etp ranks) with the
      // routing map repeated over expert TP (_initialize_metadata: top_k·etp destinations among
      // num_experts·etp), so each routed copy goes straight to every expert-TP rank of its expert
      // and the combine sums their etp partial outputs: no expert-TP gather or reduce-scatter
      // (NVIDIA/Megatron-LM megatron/core/transformer/moe/token_dispatcher.py, commit 0014f137).
      const int etp = parallel.etp;
      const int group = ep * etp;
      const int nodes = parallel.ep_nodes > 0 ? parallel.ep_nodes : ep;
      const double node_copies = tokens_moe * dispatch_nodes_per_token(moe, ep, parallel.ep_nodes) * h * f;
      const double expert_copies = tokens_moe * dispatch_slots_per_token(moe, ep) * etp * h * f;
      const LayerGroup on = etp > 1 ? LayerGroup::kEtpEp : LayerGroup::kEp;
      // Chunks of the dispatcher's group toward / back from the experts; the backward moves the
      // combine's gradient the dispatch way and vice versa.
      const double toward = deepep_pipeline_chunks(tokens_moe, group, /*toward_experts=*/true);
      const double back = deepep_pipeline_chunks(tokens_moe, group, /*toward_experts=*/false);
      add_flex(ops, dispatch, on, group, nodes, node_copies * bd, expert_copies * bd, toward);
      add_flex(ops, combine, on, group, nodes, node_copies * bc, expert_copies * bc, back);
      add_flex(ops, combine_grad, on, group, nodes, node_copies * bc, expert_copies * bc, toward);
      add_flex(ops, dispatch_grad, on, group, nodes, node_copies * bc, expert_copies * bc, back);
      return;
    }
  }
  // alltoall: expert TP gathers the dispatched tokens over ETP before fc1 and reduce-scatters
  // after fc2.
  const double etp_bytes = kAct * routed_tokens * h;
  const int etp = parallel.etp;
  add_uniform(ops, CollectiveKind::kAllGather, LayerGroup::kEtp, etp, Phase::kForward, OpKind::kExpertLinear1, true, etp_bytes);
  add_uniform(ops, CollectiveKind::kReduceScatter, LayerGroup::kEtp, etp, Phase::kForward, OpKind::kExpertLinear2, false,
              etp_bytes);
  add_uniform(ops, CollectiveKind::kAllGather, LayerGroup::kEtp, etp, Phase::kInputGrad, OpKind::kExpertLinear2, true,
              etp_bytes);
  add_uniform(ops, CollectiveKind::kReduceScatter, LayerGroup::kEtp, etp, Phase::kInputGrad, OpKind::kExpertLinear1,
              false, etp_bytes);
}

}  // namespace mofasim::model
