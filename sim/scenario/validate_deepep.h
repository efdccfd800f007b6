// Where DeepEP (model.moe.token_dispatcher_type: flex) can run: its dispatcher group is Megatron's
// tp_ep group of ep*etp ranks, and DeepEP runs either intranode (at most NUM_MAX_NVL_PEERS = 8
// ranks, all NVLink peers on one node) or internode (a multiple of 8 ranks, group rank r on node
// r / 8 as NVLink peer r % 8, paired over RDMA with the ranks of the same r % 8 on the other nodes:
// num_rdma_ranks = num_ranks / 8; DeepEP csrc/deep_ep.cpp, csrc/kernels/configs.cuh). Run by
// validate_scenario through check_expert_layout.
#pragma once

#include <string>
#include <vector>

#include "proto/scenario.pb.h"
#include "sim/scenario/validate_layout.h"
#include "topology/placement.h"

namespace mofasim::scenario {

// DeepEP's NUM_MAX_NVL_PEERS: NVLink peers per RDMA rank.
inline constexpr int kDeepEpNvlPeers = 8;

// Whether DeepEP can run over one dispatcher group, its member ranks (= GPUs) ascending as
// torch.distributed numbers a group's ranks: all on one node with at most 8 members, or runs of 8
// consecutive members each filling one node's share of the group (one run per node) at the same
// local GPU indices (gpu % gpus_per_node) on every node.
bool deepep_can_run(const std::vector<int>& members, int gpus_per_node);

// The first dispatcher group (kExpertTpEp) of the placement of `sizes` in `order` that DeepEP
// cannot run over, or an empty list when it can run over every one. Every group is enumerated as
// the topology places it (topology::group_members_of). Throws std::invalid_argument for a layout
// the placement refuses.
std::vector<int> first_group_deepep_cannot_run(const topology::ParallelSizes& sizes, const topology::RankOrder& order,
                                               int gpus_per_node);

// With flex: the size of the dispatcher group (at most 8 or a multiple of 8), then its placement in
// the scenario's rank order and topology.gpus_per_node; one located error naming the field that
// decides it (parallelism.ep, parallelism.rank_order or topology.gpus_per_node).
void check_deepep_group(const proto::Scenario& s, const proto::Parallelism& x, const proto::MoeConfig& moe,
                        const FieldFail& fail);

}  // namespace mofasim::scenario
