// How routed tokens travel in a MoE layer (Megatron-Core's token dispatchers) and how many of them
// the busiest expert-parallel rank computes: the EP and expert-TP collectives of one MoE layer, for
// one micro-batch on one GPU, that op_table.cc appends to the layer's table.
//
// Notation (op_table.h): T_g tokens each GPU dispatches, k = top_k, h = hidden size, B_d / B_c the
// dispatch / combine bytes per element, f = routed_token_factor (below), ep the EP group size,
// N = nodes the dispatcher's group spans (ParallelSpec::ep_nodes: the ETP×EP group, which is the
// EP group when etp = 1), g = ep·etp / N group ranks per node.
//   alltoall: dispatch and combine are pairwise all-to-alls over EP of S = T_g·k·h·f·B (a copy per
//     routed expert). Node-limited routing does not change these bytes: it bounds the nodes a
//     token reaches, not its copies.
//   allgather: each rank gathers every token of its ETP×EP group (Megatron's tp_ep group, etp·ep
//     ranks), S = etp·ep·T_g·h·B_d (not scaled by f: the gather moves every token whatever the
//     routing); the combine reduce-scatters the same buffer in B_c. Every expert-TP rank then holds
//     its experts' tokens, so no expert-TP gather follows.
//   flex (DeepEP): two hops over Megatron's tp_ep group (ep·etp ranks; MoEFlexTokenDispatcher
//     repeats the routing map over expert TP, so a token has k·etp destination ranks). Scale-out:
//     one copy per destination node, S = T_g·D·h·f·B, of which the NIC carries the (N−1)/N that
//     leaves the node; scale-up: the forward to the destination GPUs inside each node, once to
//     each expert-TP rank of every expert slot holding one of the token's experts, S = T_g·S_k·
//     etp·h·f·B (dispatch_slots_per_token), (g−1)/g of it over NVLink. D = the expected distinct
//     destination nodes of a token whose k distinct experts are spread evenly over the R nodes it
//     may reach, E_r experts on them: D = R·(1 − C(E_r − E_r/R, k) / C(E_r, k)), R = N, or with
//     node-limited routing R = min(N, M·⌈N/G⌉) (G groups, M per token, a group spanning ⌈N/G⌉
//     nodes; E_r = E·M/G): DeepSeek-V3's bound (report §3.2.2, each token to at most M = 4 nodes).
//     DeepSeek-V3 on 8 nodes: D = 5.29 unlimited, 3.63 at M = 4. When the group spans more nodes than it has
//     expert slots (N > ep: an expert-TP group wider than a node), each slot spans s = N/ep nodes,
//     R counts slots (ep) and D is s times that. The combine runs the hops in reverse and sums the
//     etp partial outputs of each expert (fc2 is row-parallel over expert TP) on the way back.
//     DeepEP's normal kernels pipeline the two hops in chunks (moe_deepep.h): the second hop's
//     CommOp carries pipeline_chunks = n and names the first (pipelined_with), and the rank plan
//     prices the pair as max(T1, T2) + min(T1, T2)/n.
//   The backward mirrors the forward: the combine's gradient goes the dispatch way and the
//   dispatch's gradient the combine way, both in B_c (bf16 gradients).
//   Expert TP (etp > 1) with alltoall: the dispatched tokens are all-gathered over the ETP group
//   of the expert layout (topology::GroupKind::kExpertTp) before fc1 and reduce-scattered after
//   fc2 (backward mirrored), S = 2·(routed tokens)·h, as Megatron's alltoall dispatcher does
//   (gather_from_sequence_parallel_region over the expert-TP group). allgather and flex carry no
//   such step: their group already is ETP×EP. The hops of flex sit on LayerGroup::kEtpEp when
//   etp > 1 and on kEp when etp = 1 (the same ranks).
#pragma once

#include "model/op_table.h"
#include "model/spec.h"

namespace mofasim::model {

// The busiest EP rank's routed tokens over the mean share (op_table.h's `imbalance`):
//   dropless: load_imbalance (1 when ep = 1: every expert is on the one rank, the total is fixed);
//   capacity factor C: min(that, C), every expert keeps at most C times its mean share;
//   padded to capacity: C, every expert computes exactly its capacity.
double routed_token_factor(const MoeSpec& moe, int ep);

// D above: the expected nodes a token's copies reach under the flex dispatcher, for a dispatcher
// group (ETP×EP) spanning group_nodes nodes (<= 0: unknown, each EP rank's slot its own node).
double dispatch_nodes_per_token(const MoeSpec& moe, int ep, int group_nodes);

// The expected expert slots (EP ranks, each an expert-TP group) a token's experts sit on, among
// those the node limit lets it reach. DeepEP sends a token once to each rank that holds any of its
// experts (deep_ep get_dispatch_layout: is_token_in_rank, num_tokens_per_rank), where Megatron's
// alltoall dispatcher sends one copy per routed expert; the flex dispatcher's NVLink copies are these
// times etp: its k distinct experts, drawn as a trained router spreads them over the E_r experts it
// may reach, hit S·(1 − C(E_r − E_r/S, k) / C(E_r, k)) of the S slots those sit on (S = ep, or
// router_group_topk · ceil(ep / router_num_groups) under node-limited routing).
double dispatch_slots_per_token(const MoeSpec& moe, int ep);

// The routed tokens (per GPU and micro-batch, busiest rank) that the alltoall dispatcher copies
// into local-expert order after its all-to-all and back before the combine: Megatron-Core's
// MoEAlltoAllTokenDispatcher "Permutation 2" (dispatch_postprocess) and "Unpermutation 2"
// (combine_preprocess) run whenever a rank holds more than one local expert, as
// view(ranks, local experts, capacity, h).transpose(0, 1).contiguous() when padded to capacity and
// as sort_chunks_by_idxs (TE's fused moe_sort_chunks_by_index under --moe-permute-fusion) when
// dropless (NVIDIA/Megatron-LM megatron/core/transformer/moe/token_dispatcher.py, commit
// 0014f137). The count is k·etp·f·T_g (every routed copy after the expert-TP gather). 0 when no
// such copy runs: another dispatcher (allgather and flex put tokens in expert order in their own
// permute), one local expert, or a padded layout on one rank (ep·etp = 1: the transpose moves a
// size-1 dimension, so contiguous() copies nothing; the dropless sort still copies).
double tokens_sorted_by_local_expert(const MoeSpec& moe, const ParallelSpec& parallel, double tokens_moe);

// Throws std::invalid_argument for a routing or capacity setting that cannot run (one line,
// naming the field): router groups not dividing num_experts, group_topk outside [1, groups] or
// above top_k, group_topk without groups, a capacity factor <= 0, padding without a capacity
// factor or with flex.
void validate_moe_routing(const MoeSpec& moe);

// Throws std::invalid_argument for a layout the MoE layer cannot run on: ep*etp not dividing
// tp*cp*dp (Megatron's rule: etp*ep*pp divides the world; etp may exceed tp). validate_parallel
// (shape.h) checks etp against the expert FFN width first.
void validate_moe_parallel(const ModelSpec& model, const ParallelSpec& parallel);

// Appends the EP dispatch/combine and the expert-TP collectives of one MoE layer. tokens_moe =
// T_g; routed_tokens = the tokens the busiest rank's experts compute (all local experts).
void add_moe_collectives(LayerOps& ops, const ModelSpec& model, const ParallelSpec& parallel, double tokens_moe,
                         double routed_tokens);

}  // namespace mofasim::model
