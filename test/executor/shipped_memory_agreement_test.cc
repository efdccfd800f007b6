// `mofasim memory` and the step simulation's live peak agree rank by rank on every shipped scenario
// (scenarios/*.yaml, scenarios/mofa/*.yaml) and on a grid of schedules and recompute modes: the
// memory model's activation peak (model::memory_report over the schedule's pass order,
// schedules::rank_orders, as cmd_memory computes it) against the replay's maximum of live bytes.
//
// Exact (1e-9 relative: the two sum the same bytes in different orders) wherever the passes of a
// rank run one after another. Two cases are not exact, and say why:
//  - An EP-overlapped F&B pair (DualPipe's, or 1F1B's paired steady state, with ep_overlap on):
//    the replay alternates the two passes compute task by compute task; the memory model walks
//    the pair's forward whole before its backward releases, an upper bound on any interleaving.
//    So replay <= model <= replay + StageMemory::pair_slack_bytes (the rank's largest forward
//    pass), checked as such (DeepSeek-V3 ranks 1-14: 42.26 GiB model, 41.65 GiB replay).
//  - Activation offload: how many layers wait for their D2H copy depends on copy and compute
//    times, which only the replay has (the model keeps two layers, MoFa(35)). Offloading scenarios
//    are compared with offload off; the closed form is tested in test/model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "model/memory.h"
#include "schedules/factory.h"
#include "sim/executor/simulate_step.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/scenario_specs.h"
#include "test/support/shipped_scenarios.h"

namespace mofasim::executor {
namespace {

constexpr double kExact = 1e-9;

bool has_paired_passes(const std::vector<model::RankOrder>& orders) {
  for (const model::RankOrder& o : orders) {
    for (const model::RankPass& p : o.passes) {
      if (p.paired_with_next) return true;
    }
  }
  return false;
}

// Returns the largest relative gap |replay - model| / model over the ranks, after checking it.
double expect_agreement(const std::string& path, std::vector<std::string> sets) {
  const scenario::LoadedScenario probe = cli::load_checked(path, sets);
  if (probe.features.activation_offload.enabled) sets.push_back("optimizations.activation_offload.enabled=false");
  const scenario::LoadedScenario s = cli::load_checked(path, sets);
  const std::vector<double> inflight = schedules::stage_inflight_microbatches(s.model, s.parallel, s.features);
  const std::vector<model::RankOrder> orders = schedules::rank_orders(s.model, s.parallel, s.features);
  const model::MemoryReport report = model::memory_report(s.model, s.hardware, s.parallel, s.features, inflight, orders);
  const StepResult r = simulate_step(cli::simulation_input(s), {});
  const bool paired = has_paired_passes(orders);
  EXPECT_EQ(r.memory.size(), report.stages.size()) << path;
  double worst = 0;
  for (std::size_t i = 0; i < std::min(r.memory.size(), report.stages.size()); ++i) {
    const model::StageMemory& st = report.stages[i];
    const double model_bytes = st.activation_bytes;
    const double replay_bytes = r.memory[i].peak_activation_bytes;
    worst = std::max(worst, std::abs(replay_bytes - model_bytes) / model_bytes);
    const std::string where = path + " rank " + std::to_string(i) + ": memory " + std::to_string(model_bytes) +
                              " B, replay " + std::to_string(replay_bytes) + " B";
    if (paired) {
      EXPECT_GT(st.pair_slack_bytes, 0) << where;
      EXPECT_LE(replay_bytes, model_bytes * (1 + kExact)) << where;
      EXPECT_LE(model_bytes - replay_bytes, st.pair_slack_bytes) << where;
    } else {
      EXPECT_EQ(st.pair_slack_bytes, 0) << where;
      EXPECT_NEAR(replay_bytes, model_bytes, kExact * model_bytes) << where;
    }
    // The replay's row names the stages the memory model's row holds (both of a DualPipe rank's).
    if (s.parallel.schedule == schedules::ScheduleKind::kDualPipe) {
      const std::vector<int> held = s.parallel.pp - 1 - static_cast<int>(i) == static_cast<int>(i)
                                        ? std::vector<int>{static_cast<int>(i)}
                                        : std::vector<int>{static_cast<int>(i), s.parallel.pp - 1 - static_cast<int>(i)};
      EXPECT_EQ(r.memory[i].stages_held, held) << where;
    } else {
      EXPECT_TRUE(r.memory[i].stages_held.empty()) << where;
    }
    // The step plan's check value is the same report.
    EXPECT_NEAR(r.memory[i].model_activation_bytes, model_bytes, kExact * model_bytes) << where;
  }
  return worst;
}

TEST(ShippedMemoryAgreement, EveryShippedScenarioRankByRank) {
  const std::vector<std::filesystem::path> paths = test::shipped_scenario_paths();
  ASSERT_GE(paths.size(), 12U);
  for (const std::string path : paths) {
    SCOPED_TRACE(path);
    expect_agreement(path, {});
  }
}

TEST(ShippedMemoryAgreement, DeepSeekV3RanksHoldBothDualPipeChunks) {
  // Rank 0 runs stage 0 (embedding, the 3 dense layers) and stage 15 (2 MoE layers, the MTP module,
  // the head); rank 15 the same two: they peak alike, and below the middle ranks' two 4-layer MoE
  // chunks (the scenario's split 3 + 4 x 14 + 2 is chosen so).
  const scenario::LoadedScenario s = cli::load_checked(std::string(MOFASIM_SOURCE_DIR) + "/scenarios/deepseek-v3-h800-2048.yaml", {});
  const std::vector<double> inflight = schedules::stage_inflight_microbatches(s.model, s.parallel, s.features);
  const model::MemoryReport r = model::memory_report(s.model, s.hardware, s.parallel, s.features, inflight,
                                                     schedules::rank_orders(s.model, s.parallel, s.features));
  EXPECT_DOUBLE_EQ(r.stages.front().activation_bytes, r.stages.back().activation_bytes);
  EXPECT_DOUBLE_EQ(r.stages.front().peak_bytes, r.stages.back().peak_bytes);
  EXPECT_LT(r.stages.back().activation_bytes, r.stages[1].activation_bytes);
}

// tiny-llama with 8 layers on pp 4 (TP 2, DP 1, m = 16): every schedule, every recompute mode.
std::vector<std::string> grid_sets(const std::string& schedule, const std::string& recompute) {
  std::vector<std::string> sets{"parallelism.pp=4", "parallelism.dp=1", "model.num_layers=8",
                                "parallelism.schedule=" + schedule, "optimizations.recompute=" + recompute};
  if (schedule == "interleaved-1f1b") sets.push_back("parallelism.vpp=2");
  return sets;
}

TEST(ShippedMemoryAgreement, ScheduleAndRecomputeGridIsExact) {
  const std::string small = std::string(MOFASIM_SOURCE_DIR) + "/scenarios/small.yaml";
  for (const std::string schedule : {"gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "dualpipe"}) {
    for (const std::string recompute : {"none", "selective", "full"}) {
      SCOPED_TRACE(schedule + " / " + recompute);
      EXPECT_LE(expect_agreement(small, grid_sets(schedule, recompute)), kExact);
    }
  }
  // DualPipe with chunks of different sizes: each rank holds stage i and stage 3 - i.
  std::vector<std::string> uneven = grid_sets("dualpipe", "selective");
  uneven.push_back("parallelism.stage_layers=[3,2,2,1]");
  EXPECT_LE(expect_agreement(small, uneven), kExact);
  // ZB-H1's deferred weight-gradient passes keep the GEMM inputs (full recompute: the rebuilt ones).
  std::vector<std::string> block = grid_sets("zb-h1", "full");
  block.push_back("optimizations.recompute_method=block");
  block.push_back("optimizations.recompute_num_layers=1");
  EXPECT_LE(expect_agreement(small, block), kExact);
  // MemFine with a split backward: the input-gradient pass keeps the weight-gradient inputs MemFine
  // does not rebuild (model::weight_grad_inputs), in the walk and in the replay alike.
  for (const std::string schedule : {"zb-h1", "dualpipe"}) {
    SCOPED_TRACE("memfine / " + schedule);
    std::vector<std::string> memfine = grid_sets(schedule, "none");
    for (const char* set : {"model.moe.num_experts=4", "model.moe.top_k=2", "model.moe.expert_ffn_hidden_size=256",
                            "optimizations.memfine.enabled=true", "optimizations.memfine.chunks=2"}) {
      memfine.emplace_back(set);
    }
    EXPECT_LE(expect_agreement(small, memfine), kExact);
  }
}

}  // namespace
}  // namespace mofasim::executor
