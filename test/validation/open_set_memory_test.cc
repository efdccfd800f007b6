// Peak memory against the measured peaks of the open set (../shared/validation/open/runs.csv; or
// $MOFASIM_SHARED_DIR), skipped when that folder is absent. The single-node B200 rows (O-SMXB)
// give "real peak alloc X GiB (max over ranks)" in their notes: PyTorch's max_memory_allocated, so
// the model's side is its worst stage's allocated peak (StageMemory::allocated_bytes; the CUDA
// context, the allocator's fragmentation and memory_reserved are not allocations, and the reserved
// total the fit is judged on adds them). docs/memory-fit.md reports the figures;
// the bounds below are them plus one percentage point.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "model/memory.h"
#include "schedules/factory.h"
#include "sim/analysis/measured_open_mapping.h"
#include "sim/analysis/measured_open_reader.h"
#include "test/validation/shared_data_dir.h"

namespace mofasim::analysis {
namespace {

std::string runs_path() { return shared_data_dir() + "/validation/open/runs.csv"; }

constexpr double kGiB = 1024.0 * 1024 * 1024;

struct PeakError {
  std::string id;
  double measured_gib = 0;
  double model_gib = 0;
  [[nodiscard]] double error_percent() const { return 100 * (model_gib - measured_gib) / measured_gib; }
};

std::vector<PeakError> b200_peak_errors(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::vector<PeakError> out;
  for (const OpenRun& run : parse_open_runs_csv(text.str(), "runs.csv")) {
    const std::string key = "real peak alloc ";
    const auto at = run.notes.find(key);
    if (run.source_group() != "O-SMXB" || at == std::string::npos) continue;
    const OpenCase c = map_open_run(run);
    if (!c.spec) continue;
    const MeasuredCase& m = *c.spec;
    const std::vector<double> inflight = schedules::stage_inflight_microbatches(m.model, m.parallel, m.features);
    const std::vector<model::RankOrder> orders = schedules::rank_orders(m.model, m.parallel, m.features);
    const model::MemoryReport r = model::memory_report(m.model, m.hardware, m.parallel, m.features, inflight, orders);
    double peak = 0;
    for (const model::StageMemory& st : r.stages) peak = std::max(peak, st.allocated_bytes);
    out.push_back({run.id, std::stod(run.notes.substr(at + key.size())), peak / kGiB});
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

TEST(OpenSetMemory, B200PeakAllocationWithinTodaysMedianError) {
  const std::string path = runs_path();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "the open set is not at " << path << "; skipping";
  const std::vector<PeakError> rows = b200_peak_errors(path);
  std::vector<double> ape;
  for (const PeakError& e : rows) {
    std::cout << e.id << " measured " << e.measured_gib << " GiB, model " << e.model_gib << " GiB, "
              << e.error_percent() << " %\n";
    ape.push_back(std::abs(e.error_percent()));
  }
  std::cout << rows.size() << " rows, median |error| " << median(ape) << " %\n";
  // Measured on this commit: 43 rows (O-SMXB-44 gives no peak), every one under the measured
  // peak, median |error| 2.95 %, largest 8.56 % (O-SMXB-25, LLaMA3-405B shape on 4 layers, pp 2).
  ASSERT_EQ(rows.size(), 43U);
  EXPECT_LE(median(ape), 2.95 + 1.0);
  EXPECT_LE(*std::max_element(ape.begin(), ape.end()), 8.56 + 1.0);
}

}  // namespace
}  // namespace mofasim::analysis
