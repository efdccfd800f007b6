// The asynchronous checkpoint drain beside training through `mofasim ettr`: the drain replayed with
// the step's traffic is reported, and its duration and slowdown are what the fault model charges.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test/cli/run_cli.h"

namespace mofasim::test {
namespace {

namespace fs = std::filesystem;

// scenarios/small.yaml on two nodes of 4 GPUs (so DP and PP traffic crosses the NICs the drain
// leaves by), checkpointing asynchronously to a fast tier so the NICs, not the tier, bind. Without
// the preset's eager launch cost, so the drain meets the first micro-batches' PP sends.
TEST(CliDrain, EttrReportsTheDrainUnderTrainingAndChargesItsSlowdown) {
  std::string text = read_file(fs::path(MOFASIM_SOURCE_DIR) / "scenarios/small.yaml");
  const std::string given = "checkpoint: { interval_steps: 100, save_time: \"1 s\", mode: blocking }";
  ASSERT_NE(text.find(given), std::string::npos);
  text.replace(text.find(given), given.size(),
               "checkpoint: { interval_steps: 100, mode: async, storage: { write_bandwidth: \"100 TB/s\" } }");
  const fs::path file = fs::temp_directory_path() / ("mofasim_drain_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << text;
  const std::string args = "ettr " + file.string() + " --trials 100 --set topology.gpus_per_node=4 " +
                           "--set 'hardware.kernel_launch=0 s' " +
                           "--set 'topology.inter_node={bandwidth: \"25 GB/s\", latency: \"5 us\"}'";
  const CliRun json_run = run_mofasim(args + " --json");
  const CliRun text_run = run_mofasim(args);
  fs::remove(file);
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  ASSERT_EQ(text_run.exit_code, 0) << text_run.err;
  const auto j = nlohmann::json::parse(json_run.out);
  const auto& io = j.at("checkpoint_io");
  const auto& d = io.at("drain_under_training");
  EXPECT_DOUBLE_EQ(d.at("healthy_step_s").get<double>(), j.at("step_time_s").get<double>());  // simulated
  // The first micro-batches' PP sends cross the NICs while it drains: the drain takes longer than on an idle
  // network (0.2425 against 0.2399 ms) and the step a little longer too.
  EXPECT_GT(d.at("drain_s").get<double>(), io.at("drain_s").get<double>());
  EXPECT_GT(d.at("slowdown_s").get<double>(), 0);
  EXPECT_GE(d.at("draining_steps").get<int>(), 1);
  // The closed form charges snapshot + slowdown per checkpoint, steps / interval_steps times.
  const double steps = j.at("analytic").at("t_eff_s").get<double>() / j.at("step_time_s").get<double>();
  const double per_checkpoint = io.at("snapshot_s").get<double>() + std::max(0.0, d.at("slowdown_s").get<double>());
  EXPECT_NEAR(j.at("analytic").at("checkpoint_s").get<double>(), steps / 100 * per_checkpoint,
              1e-9 * steps * per_checkpoint);
  EXPECT_NE(text_run.out.find("drain      beside training: "), std::string::npos) << text_run.out;
}

}  // namespace
}  // namespace mofasim::test
