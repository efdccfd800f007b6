// gemm_shape_report GEMM.CSV: the kernel model's GEMM time (model/kernels/gemm_cost.h) against every
// per-shape row of a GEMM measurement table (columns gpu, dtype, M, N, K, tflops, source, notes;
// ../shared/data/kernels/gemm.csv), with each GPU's parameters from its shipped hardware preset.
// Prints, per GPU and dtype, the rows compared and the median, P90 and max of |predicted/measured - 1|
// and the median signed error, for the fitting subsets (even-numbered A100-PCIe rows, where
// kTileFillK was chosen; even-numbered B200 rows, where b200.yaml's gemm_ceiling_bf16 was fitted)
// and for the held-out rest, with the median measured/predicted of each fitting subset (the factor
// its GPU's ceiling would take to zero that subset's median signed error); rows without a preset or dtype are counted as
// skipped with the reason. A tool, not a test: the product and its tests never read ../shared.
#include "test/support/csv_line.h"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "model/kernels/gemm_cost.h"
#include "model/spec.h"
#include "sim/scenario/loader.h"

namespace {

using mofasim::model::HardwareSpec;

HardwareSpec preset(const std::string& name) {
  const std::string text = "name: gemm-report\nmodel: {preset: gpt3-175b}\nhardware: {preset: " + name +
                           "}\ntopology: {gpus: 8, gpus_per_node: 8, intra_node: {bandwidth: \"150 GB/s\"}, "
                           "inter_node: {bandwidth: \"12.5 GB/s\"}}\nparallelism: {tp: 8, global_batch: 8}\n";
  return mofasim::scenario::load_scenario_from_string(text, "preset " + name).hardware;
}

// The measured table's GPU names -> the shipped preset that describes that GPU.
const std::map<std::string, std::string> kPresetOf = {
    {"A100-PCIe-80GB", "a100-pcie"}, {"A100-PCIe", "a100-pcie"}, {"A100-SXM4", "a100-80gb"},
    {"H100-SXM", "h100-sxm"},        {"H200-SXM", "h200"},       {"H800-SXM5", "h800"},
    {"B200", "b200"},                {"B200-SXM", "b200"},       {"GB200", "gb200"}};

struct Errors {
  std::vector<double> abs;
  std::vector<double> signed_;
  std::vector<double> measured_over_predicted;
  double measured_seconds = 0;   // summed over the rows: a step's GEMMs add up, so the ratio of
  double predicted_seconds = 0;  // the sums is the ceiling factor that gets their total time right
  std::vector<double> sustained_measured_over_predicted;  // rows whose measured kernel takes >= kSustained
};

// Kernels at least this long sit on B200's flat plateau of gemm.csv (median 1,080-1,100 TFLOPS in
// every octave of measured time from 256 us up; 1,120-1,360 below): the clock the power cap
// sustains, which a training step's back-to-back kernels run at.
constexpr double kSustainedSeconds = 256e-6;

// GPUs whose per-shape rows fit a constant: on the even-numbered rows (file order) only.
bool fitted_on(const std::string& gpu) { return gpu == "A100-PCIe-80GB" || gpu == "B200"; }

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = static_cast<std::size_t>(std::ceil(pos));
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gemm_shape_report GEMM.CSV\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "gemm_shape_report: %s: cannot open\n", argv[1]);
    return 2;
  }
  std::map<std::string, HardwareSpec> presets;
  std::map<std::string, Errors> fit;
  std::map<std::string, Errors> held_out;
  std::map<std::string, int> skipped;
  std::string line;
  std::getline(in, line);  // header
  const std::regex groups_re(R"((?:ng=(\d+))|(?:(\d+) groups))");
  const std::regex stage_re(R"(stage=(\w+))");
  for (int index = 0; std::getline(in, line); ++index) {
    const std::vector<std::string> f = mofasim::test::split_csv_cells(line);
    if (f.size() < 8) continue;
    const std::string& gpu = f[0];
    const std::string& dtype = f[1];
    const bool fp8 = dtype.rfind("fp8", 0) == 0;
    if (dtype != "bf16" && !fp8) {
      ++skipped[gpu + " " + dtype + " (no such dtype in the schema)"];
      continue;
    }
    const auto p = kPresetOf.find(gpu);
    if (p == kPresetOf.end()) {
      ++skipped[gpu + " (no preset)"];
      continue;
    }
    if (!presets.contains(p->second)) presets[p->second] = preset(p->second);
    const HardwareSpec& hw = presets[p->second];
    double m = std::stod(f[2]);
    double n = std::stod(f[3]);
    double k = std::stod(f[4]);
    int groups = 1;
    std::smatch match;
    const std::string& notes = f[7];
    if (notes.find("GROUPED") != std::string::npos && std::regex_search(notes, match, groups_re)) {
      groups = std::stoi(match[1].matched ? match[1].str() : match[2].str());
      if (std::regex_search(notes, match, stage_re)) {  // M, N, K name the forward shape
        if (match[1] == "bwd_grad_act") std::swap(n, k);
        if (match[1] == "bwd_grad_w") {
          const double fm = m;
          m = k;
          k = fm;
        }
      }
    }
    const double ceiling = fp8 ? hw.kernels.gemm_ceiling_fp8 : hw.kernels.gemm_ceiling_bf16;
    const double in_bytes = fp8 ? 1 : 2;
    const double bytes = groups * (in_bytes * (m * k + k * n) + 2 * m * n);
    const mofasim::model::kernels::GemmDevice device{.sm_count = hw.kernels.sm_count,
                                                     .tile_m = hw.kernels.gemm_tile_m,
                                                     .tile_n = hw.kernels.gemm_tile_n,
                                                     .ceiling_flops = ceiling,
                                                     .hbm_bandwidth = hw.hbm_bandwidth,
                                                     .hbm_fraction = hw.kernels.hbm_fraction,
                                                     .grouped_fraction = hw.kernels.grouped_gemm_fraction,
                                                     .stream_k = hw.kernels.gemm_stream_k};
    const double seconds = mofasim::model::kernels::gemm_time(device, m, n, k, groups, bytes).seconds;
    const double predicted = 2 * m * n * k * groups / seconds / 1e12;
    const double error = predicted / std::stod(f[5]) - 1;
    const bool in_fit = fitted_on(gpu) && index % 2 == 0;
    Errors& e = (in_fit ? fit : held_out)[gpu + " " + (fp8 ? std::string("fp8") : dtype) + (groups > 1 ? " grouped" : "")];
    e.abs.push_back(std::fabs(error));
    e.signed_.push_back(error);
    e.measured_over_predicted.push_back(1 / (1 + error));
    e.measured_seconds += 2 * m * n * k * groups / (std::stod(f[5]) * 1e12);
    e.predicted_seconds += seconds;
    if (2 * m * n * k * groups / (std::stod(f[5]) * 1e12) >= kSustainedSeconds) {
      e.sustained_measured_over_predicted.push_back(1 / (1 + error));
    }
  }
  auto print = [](const char* title, const std::map<std::string, Errors>& groups) {
    std::printf("%s\n| GPU dtype | rows | median abs | P90 abs | max abs | median signed |\n|---|---:|---:|---:|---:|---:|\n",
                title);
    for (const auto& [key, e] : groups) {
      std::printf("| %s | %zu | %.1f %% | %.1f %% | %.1f %% | %+.1f %% |\n", key.c_str(), e.abs.size(),
                  100 * quantile(e.abs, 0.5), 100 * quantile(e.abs, 0.9), 100 * quantile(e.abs, 1.0),
                  100 * quantile(e.signed_, 0.5));
    }
  };
  print("Fitting subsets (even-numbered A100-PCIe and B200 rows):", fit);
  for (const auto& [key, e] : fit) {
    std::printf("- %s: median measured/predicted %.4f, summed predicted/measured time %.4f, median measured/predicted of the %zu rows >= 256 us %.4f\n", key.c_str(),
                quantile(e.measured_over_predicted, 0.5), e.predicted_seconds / e.measured_seconds,
                e.sustained_measured_over_predicted.size(),
                e.sustained_measured_over_predicted.empty() ? 0.0 : quantile(e.sustained_measured_over_predicted, 0.5));
  }
  print("\nHeld out (every other row):", held_out);
  for (const auto& [key, e] : held_out) {
    std::printf("- %s: summed predicted/measured time %.4f\n", key.c_str(), e.predicted_seconds / e.measured_seconds);
  }
  std::printf("\nSkipped:\n");
  for (const auto& [why, count] : skipped) std::printf("- %s: %d rows\n", why.c_str(), count);
  return 0;
}
