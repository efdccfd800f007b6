// PerturbationSpec: validation names the field, resolution onto a topology gives the factors and
// the affected GPUs a hand count gives, and a seeded fraction always draws the same GPUs.
#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/perturb/perturbation.h"

namespace mofasim::perturb {
namespace {

// 4 nodes of 4 GPUs, 2 NICs per node (GPUs 0-1 on rail 0, 2-3 on rail 1), 2 nodes per supernode.
topology::TopologySpec cluster() {
  return {.gpus = 16, .gpus_per_node = 4, .nodes_per_supernode = 2, .intra_node = {.bandwidth = 100e9},
          .inter_node = {.bandwidth = 25e9}, .nics_per_node = 2};
}

std::string error_of(const PerturbationSpec& spec) {
  try {
    spec.validate(cluster());
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Perturbation, ValidationNamesTheFieldAndTheBadValue) {
  PerturbationSpec p;
  p.slow.push_back({.ranks = {3, 16}, .slowdown = 1.5});
  EXPECT_EQ(error_of(p), "perturbations.slow[0].ranks[1]: rank 16 is outside the cluster (0..15)");
  p.slow[0] = {.ranks = {3}, .nodes = {1}, .slowdown = 1.5};
  EXPECT_EQ(error_of(p), "perturbations.slow[0]: give only one of ranks, fraction, nodes or supernodes");
  p.slow[0] = {.slowdown = 1.5};
  EXPECT_EQ(error_of(p), "perturbations.slow[0]: give one of ranks, fraction, nodes or supernodes");
  p.slow[0] = {.ranks = {3}, .slowdown = 0.5};
  EXPECT_EQ(error_of(p), "perturbations.slow[0].slowdown: must be >= 1 (compute time multiplier), got 0.5");
  p.slow[0] = {.supernodes = {2}, .slowdown = 2};
  EXPECT_EQ(error_of(p), "perturbations.slow[0].supernodes[0]: supernode 2 is outside the cluster (0..1)");
  p.slow.clear();
  p.degraded_links.push_back({.level = LinkLevel::kNic, .node = 4, .bandwidth_fraction = 0.5});
  EXPECT_EQ(error_of(p), "perturbations.degraded_links[0].node: node 4 is outside the cluster (0..3)");
  p.degraded_links[0] = {.level = LinkLevel::kNic, .node = 1, .nic = 2, .bandwidth_fraction = 0.5};
  EXPECT_EQ(error_of(p), "perturbations.degraded_links[0].nic: NIC 2 is outside the node (0..1)");
  p.degraded_links[0] = {.level = LinkLevel::kNvlink, .node = 1, .bandwidth_fraction = 0.5};
  EXPECT_EQ(error_of(p), "perturbations.degraded_links[0].gpu: missing (required by level nvlink)");
  p.degraded_links[0] = {.level = LinkLevel::kNic, .gpu = 1, .node = 1, .bandwidth_fraction = 0.5};
  EXPECT_EQ(error_of(p), "perturbations.degraded_links[0].gpu: only used with level nvlink (nic and spine take node and nic)");
  p.degraded_links[0] = {.level = LinkLevel::kSpine, .node = 1, .bandwidth_fraction = 0};
  EXPECT_EQ(error_of(p), "perturbations.degraded_links[0].bandwidth_fraction: must be in (0, 1], got 0");
  p.degraded_links[0] = {.level = LinkLevel::kSpine, .node = 1, .bandwidth_fraction = 0.5};
  EXPECT_EQ(error_of(p), "");
}

TEST(Perturbation, ResolveGivesFactorsPerGpuAndPerLink) {
  const topology::Topology topo(cluster());
  PerturbationSpec p;
  p.slow.push_back({.ranks = {5}, .slowdown = 1.5});
  p.slow.push_back({.nodes = {1}, .slowdown = 2});  // GPUs 4-7; GPU 5 is slowed twice: 3x
  p.degraded_links.push_back({.level = LinkLevel::kNic, .node = 2, .nic = 1, .bandwidth_fraction = 0.5});
  p.degraded_links.push_back({.level = LinkLevel::kNvlink, .gpu = 0, .bandwidth_fraction = 0.25});
  const ResolvedPerturbations r = resolve(p, topo);
  EXPECT_DOUBLE_EQ(r.compute(5), 3.0);
  EXPECT_DOUBLE_EQ(r.compute(4), 2.0);
  EXPECT_DOUBLE_EQ(r.compute(8), 1.0);
  EXPECT_DOUBLE_EQ(r.link(topology::index_of(topo.nic_tx(2, 1))), 0.5);
  EXPECT_DOUBLE_EQ(r.link(topology::index_of(topo.nic_rx(2, 1))), 0.5);
  EXPECT_DOUBLE_EQ(r.link(topology::index_of(topo.nic_tx(2, 0))), 1.0);
  EXPECT_DOUBLE_EQ(r.link(topology::index_of(topo.nvlink_tx(0))), 0.25);
  EXPECT_EQ(r.slow_gpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(r.scaleout_gpus, (std::vector<int>{10, 11}));  // node 2, rail 1
  EXPECT_EQ(r.nvlink_gpus, (std::vector<int>{0}));
  EXPECT_EQ(r.affected_gpus, (std::vector<int>{0, 4, 5, 6, 7, 10, 11}));
  EXPECT_EQ(p.name(0), "slow[0]");
  EXPECT_EQ(p.name(3), "degraded_links[1]");
  EXPECT_EQ(p.only(2).degraded_links.size(), 1U);
  EXPECT_TRUE(p.only(2).slow.empty());
}

TEST(Perturbation, SeededFractionDrawsTheSameDistinctGpus) {
  const std::vector<int> a = draw_gpus(0.25, 7, 16);
  EXPECT_EQ(a.size(), 4U);  // round(0.25 * 16)
  EXPECT_EQ(a, draw_gpus(0.25, 7, 16));
  EXPECT_NE(a, draw_gpus(0.25, 8, 16));
  for (std::size_t i = 1; i < a.size(); ++i) EXPECT_LT(a[i - 1], a[i]);
  EXPECT_EQ(draw_gpus(1e-6, 1, 16).size(), 1U);  // at least one
  EXPECT_EQ(draw_gpus(1.0, 1, 16).size(), 16U);
}

}  // namespace
}  // namespace mofasim::perturb
