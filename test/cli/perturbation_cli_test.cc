// Perturbations and the checkpoint I/O model through the mofasim command: simulate reports the
// healthy step and each perturbation's cost; ettr's checkpoint times follow the storage tier.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test/cli/run_cli.h"

namespace mofasim::test {
namespace {

namespace fs = std::filesystem;

TEST(CliPerturbations, SimulateReportsTheHealthyStepAndWhatEachPerturbationCosts) {
  const auto healthy = nlohmann::json::parse(run_mofasim("simulate scenarios/small.yaml --json -q").out);
  const CliRun run = run_mofasim(
      "simulate scenarios/small.yaml --json -q --set 'perturbations.slow=[{name: straggler, ranks: [5], slowdown: 1.5}]' "
      "--set 'perturbations.degraded_links=[{level: nvlink, gpu: 2, bandwidth_fraction: 0.5}]'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  const auto& p = j.at("perturbations");
  EXPECT_DOUBLE_EQ(p.at("healthy_step_time_s").get<double>(), healthy.at("step_time_s").get<double>());
  EXPECT_DOUBLE_EQ(p.at("cost_s").get<double>(), j.at("step_time_s").get<double>() - healthy.at("step_time_s").get<double>());
  EXPECT_GT(p.at("cost_s").get<double>(), 0);
  ASSERT_EQ(p.at("each").size(), 2U);
  EXPECT_EQ(p.at("each")[0].at("name"), "straggler");
  EXPECT_EQ(p.at("each")[1].at("name"), "degraded_links[0]");
  for (const auto& e : p.at("each")) {
    EXPECT_GT(e.at("cost_s").get<double>(), 0);
    EXPECT_TRUE(e.at("on_critical_path").get<bool>());
  }
  // TP 2 inside one node: a straggler's TP group is not replica 0's, so the replay is full.
  EXPECT_EQ(j.at("fidelity"), "full");
}

TEST(CliPerturbations, EttrFollowsTheCheckpointStorageTier) {
  std::string text = read_file(fs::path(MOFASIM_SOURCE_DIR) / "scenarios/small.yaml");
  const std::string given = "checkpoint: { interval_steps: 100, save_time: \"1 s\", mode: blocking }";
  ASSERT_NE(text.find(given), std::string::npos);
  auto ettr_with = [&](const std::string& bandwidth) {
    std::string t = text;
    t.replace(t.find(given), given.size(),
              "checkpoint: { interval_steps: 100, mode: blocking, storage: { write_bandwidth: \"" + bandwidth + "\" } }");
    const fs::path file = fs::temp_directory_path() / ("mofasim_io_" + std::to_string(::getpid()) + ".yaml");
    std::ofstream(file) << t;
    const CliRun run = run_mofasim("ettr " + file.string() + " --json --step-time 1 --trials 200");
    fs::remove(file);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return nlohmann::json::parse(run.out);
  };
  const auto slow = ettr_with("1 GB/s");
  const auto fast = ettr_with("1000 GB/s");
  const double bytes = slow.at("checkpoint_io").at("bytes").get<double>();
  EXPECT_NEAR(slow.at("checkpoint_io").at("save_s").get<double>(), bytes / 1e9, 1e-9);  // the tier binds
  // At 1000 GB/s the node's NICs bind: 8 GPUs x 46 GB/s, plus a few ns while the last stage's
  // larger shards finish alone at their copy engines' rate.
  const double nic_bound = bytes / (8 * 46e9);
  EXPECT_GE(fast.at("checkpoint_io").at("save_s").get<double>(), nic_bound - 1e-9);
  EXPECT_NEAR(fast.at("checkpoint_io").at("save_s").get<double>(), nic_bound, 1e-4 * nic_bound);
  EXPECT_LT(slow.at("analytic").at("ettr").get<double>(), fast.at("analytic").at("ettr").get<double>());
  EXPECT_GT(slow.at("analytic").at("checkpoint_s").get<double>(), fast.at("analytic").at("checkpoint_s").get<double>());
}

}  // namespace
}  // namespace mofasim::test
