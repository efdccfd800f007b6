// Folded fidelity is never silently wrong: where GPUs share NICs, folding would leave out the other
// replicas' traffic on the shared NIC, so a folded request replays every rank and says so.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/executor/simulate_step.h"
#include "test/cli/run_cli.h"

namespace mofasim::test {
namespace {

TEST(FoldingRefusal, OnlyWhenGpusOfSeveralNodesShareNics) {
  topology::TopologySpec t{.gpus = 16, .gpus_per_node = 8};
  EXPECT_EQ(executor::folding_refusal(t), "");  // one NIC per GPU (rail-optimised)
  t.nics_per_node = 2;
  EXPECT_EQ(executor::folding_refusal(t),
            "folded refused: 4 GPUs share each NIC, so other replicas' traffic would be missing");
  t.gpus = 8;  // one node: no NIC traffic at all
  EXPECT_EQ(executor::folding_refusal(t), "");
}

nlohmann::json simulate_json(const std::string& extra) {
  // small.yaml's TP2 PP2 DP2 on two 4-GPU nodes: stage 0 on node 0, stage 1 on node 1, so every
  // PP send crosses the nodes' NICs.
  const CliRun run = run_mofasim("simulate scenarios/small.yaml --json --set topology.gpus_per_node=4 " + extra);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return nlohmann::json::parse(run.out);
}

// Before folding was refused here, the folded replay of this configuration gave 0.556 ms against
// full fidelity's 0.565 ms (1.5% fast): the NIC carried only replica 0's PP traffic.
TEST(FoldingRefusal, SharedNicsReplayEveryRankAndMatchFull) {
  const auto folded = simulate_json("--set topology.nics_per_node=1");
  const auto full = simulate_json("--set topology.nics_per_node=1 --fidelity full");
  EXPECT_EQ(folded.at("fidelity"), "full");
  EXPECT_EQ(folded.at("fidelity_note"),
            "folded refused: 4 GPUs share each NIC, so other replicas' traffic would be missing");
  EXPECT_EQ(folded.at("simulated_ranks"), 8);
  EXPECT_EQ(folded.at("step_time_s").get<double>(), full.at("step_time_s").get<double>());
  EXPECT_FALSE(full.contains("fidelity_note"));  // full was asked for: nothing refused
}

TEST(FoldingRefusal, RailOptimisedNicsStillFold) {
  const auto folded = simulate_json("--set topology.nics_per_node=4");
  EXPECT_EQ(folded.at("fidelity"), "folded");
  EXPECT_FALSE(folded.contains("fidelity_note"));
  EXPECT_EQ(folded.at("simulated_ranks"), 2);  // one rank per stage
}

}  // namespace
}  // namespace mofasim::test
