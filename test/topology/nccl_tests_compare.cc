// nccl_tests_compare: the collective model against the nccl-tests rows of a collectives.csv
// (../shared/data/kernels/collectives.csv; a tool, not a test: it reads the file given on the
// command line). For every all-reduce / all-gather / reduce-scatter row with a payload, it builds
// the row's system (GPUs, nodes, NICs) and prices the collective with the NCCL protocol model and
// with the α–β model, then prints per-system error tables (markdown) and, with --rows, every row.
//
// System inputs use one rule each, no per-row fitting:
//   NVLink bus bandwidth = 0.8 × unidirectional line rate (nccl-tests#212, maintainer: "450 GB/s
//   line rate minus ~20 % protocol overhead -> ~370 GB/s"): NVLink4 450 -> 360, NVLink5 900 -> 720;
//   scale-out: 400 Gb/s NIC at 46 GB/s (the figure the shipped scenarios use, nccl-tests#290);
//   NCCL constants per generation as in the hardware presets (LL cap, NVLS efficiency / channels);
//   NVLS only where the row ran with it enabled (not NCCL_NVLS_ENABLE=0, not a Ring row of a
//   side-by-side table);
//   α–β model: 2 µs per NVLink step, 5 µs per network step (the shipped scenarios' latencies).
#include "test/support/csv_line.h"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "topology/comm_group.h"

namespace {

using namespace mofasim;
using topology::CollectiveKind;

struct System {
  std::string label;
  int gpus_per_node = 8;
  double nvlink_bus = 0;
  double nic = 0;
  topology::CollectiveTuning tuning{};
};

// The row's system, or none when the tool does not cover it.
std::optional<System> system_of(const std::string& name) {
  if (name.find("p6-b200 x4") != std::string::npos) {
    return System{.label = "4x 8 B200 (EFA)", .nvlink_bus = 720e9, .nic = 46e9,
                  .tuning = {.ll_max_bandwidth = 282e9, .nvlink_sharp = true, .nvls_efficiency = 0.74,
                             .nvls_channels = 32}};
  }
  if (name.find("p6-b200") != std::string::npos) {
    return System{.label = "8x B200 (1 node)", .nvlink_bus = 720e9,
                  .tuning = {.ll_max_bandwidth = 282e9, .nvlink_sharp = true, .nvls_efficiency = 0.74,
                             .nvls_channels = 24}};
  }
  if (name.find("H200") != std::string::npos && name.find("host") == std::string::npos) {
    return System{.label = "8x H200 (1 node)", .nvlink_bus = 360e9,
                  .tuning = {.ll_max_bandwidth = 141e9, .nvlink_sharp = true, .nvls_efficiency = 0.85,
                             .nvls_channels = 16}};
  }
  return std::nullopt;
}

std::optional<CollectiveKind> kind_of(const std::string& c) {
  if (c == "all_reduce") return CollectiveKind::kAllReduce;
  if (c == "all_gather") return CollectiveKind::kAllGather;
  if (c == "reduce_scatter") return CollectiveKind::kReduceScatter;
  return std::nullopt;
}

struct Row {
  std::string system;
  std::string collective;
  int ranks = 0;
  double bytes = 0;
  double measured_s = 0;
  double nccl_s = 0;
  double alpha_beta_s = 0;
  std::string protocol;
};

double predict(const System& sys, int ranks, CollectiveKind kind, double bytes, bool nvls, bool nccl,
               std::string* protocol) {
  const int per_node = std::min(ranks, sys.gpus_per_node);
  topology::TopologySpec spec{.gpus = ranks, .gpus_per_node = per_node,
                              .intra_node = {.bandwidth = sys.nvlink_bus, .latency = 2e-6},
                              .collectives = sys.tuning};
  if (ranks > per_node) spec.inter_node = {.bandwidth = sys.nic, .latency = 5e-6};
  spec.collectives.nvlink_sharp = sys.tuning.nvlink_sharp && nvls;
  spec.collectives.model = nccl ? topology::CollectiveModel::kNccl : topology::CollectiveModel::kAlphaBeta;
  const topology::Topology topo(spec);
  std::vector<int> members(static_cast<std::size_t>(ranks));
  for (int i = 0; i < ranks; ++i) members[static_cast<std::size_t>(i)] = i;
  const topology::CommGroup group(topo, members);
  const topology::CollectiveCost c = group.cost(kind, topology::CollectiveAlgorithm::kRing, Bytes{bytes});
  if (protocol != nullptr) *protocol = std::string(topology::protocol_name(c.protocol));
  return c.seconds();
}

struct Stats {
  double mape = 0, median = 0, max = 0, bias = 0;
};
Stats stats(std::vector<double> signed_errors) {
  Stats s;
  if (signed_errors.empty()) return s;
  std::vector<double> abs_err;
  for (double e : signed_errors) {
    abs_err.push_back(std::abs(e));
    s.mape += std::abs(e);
    s.bias += e;
    s.max = std::max(s.max, std::abs(e));
  }
  s.mape /= static_cast<double>(signed_errors.size());
  s.bias /= static_cast<double>(signed_errors.size());
  std::sort(abs_err.begin(), abs_err.end());
  const std::size_t n = abs_err.size();
  s.median = n % 2 == 1 ? abs_err[n / 2] : (abs_err[n / 2 - 1] + abs_err[n / 2]) / 2;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: nccl_tests_compare COLLECTIVES.CSV [--rows]\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "nccl_tests_compare: cannot read " << argv[1] << "\n";
    return 2;
  }
  const bool print_rows = argc > 2 && std::string(argv[2]) == "--rows";
  std::string line;
  std::getline(in, line);  // header
  std::vector<Row> rows;
  int skipped = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = mofasim::test::split_csv_cells(line);
    if (f.size() < 11) continue;
    // gpu_system, collective, scope, nranks, bytes, busbw_GBps, algbw_GBps, source, time_us, nccl_algo, notes
    const std::optional<System> sys = system_of(f[0]);
    const std::optional<CollectiveKind> kind = kind_of(f[1]);
    if (!sys || !kind || f[4].empty() || (f[6].empty() && f[8].empty())) {
      ++skipped;
      continue;
    }
    Row r;
    r.system = sys->label;
    r.collective = f[1];
    r.ranks = std::stoi(f[3]);
    r.bytes = std::stod(f[4]);
    // time_us where the source gave it; else payload / algbw.
    r.measured_s = !f[8].empty() ? std::stod(f[8]) * 1e-6 : r.bytes / (std::stod(f[6]) * 1e9);
    // NVLS off where the row ran without it: NCCL_NVLS_ENABLE=0, or a Ring row of a side-by-side
    // table that does not say NVLS was left at its default.
    const bool nvls = f[10].find("NCCL_NVLS_ENABLE=0") == std::string::npos &&
                      !(f[9] == "Ring" && f[10].find("default") == std::string::npos);
    r.nccl_s = predict(*sys, r.ranks, *kind, r.bytes, nvls, true, &r.protocol);
    r.alpha_beta_s = predict(*sys, r.ranks, *kind, r.bytes, nvls, false, nullptr);
    rows.push_back(r);
  }
  if (print_rows) {
    std::printf("| system | collective | ranks | bytes | measured us | nccl model us | protocol | error %% | alpha-beta us | error %% |\n");
    std::printf("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |\n");
    for (const Row& r : rows) {
      std::printf("| %s | %s | %d | %.0f | %.1f | %.1f | %s | %+.1f | %.1f | %+.1f |\n", r.system.c_str(),
                  r.collective.c_str(), r.ranks, r.bytes, r.measured_s * 1e6, r.nccl_s * 1e6, r.protocol.c_str(),
                  100 * (r.nccl_s / r.measured_s - 1), r.alpha_beta_s * 1e6, 100 * (r.alpha_beta_s / r.measured_s - 1));
    }
    std::printf("\n");
  }
  // Per system, and per size band: < 1 MiB (latency-bound), 1-64 MiB, >= 64 MiB.
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
  for (const Row& r : rows) {
    const std::string band = r.bytes < 1048576 ? "< 1 MiB" : r.bytes < 67108864 ? "1-64 MiB" : ">= 64 MiB";
    for (const std::string& key : {r.system + " | all", r.system + " | " + band, std::string("all systems | all")}) {
      groups[key].first.push_back(r.nccl_s / r.measured_s - 1);
      groups[key].second.push_back(r.alpha_beta_s / r.measured_s - 1);
    }
  }
  std::printf("| system | sizes | rows | nccl MAPE %% | median %% | max %% | bias %% | alpha-beta MAPE %% | median %% | max %% | bias %% |\n");
  std::printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& [key, errs] : groups) {
    const Stats a = stats(errs.first);
    const Stats b = stats(errs.second);
    std::printf("| %s | %zu | %.1f | %.1f | %.1f | %+.1f | %.1f | %.1f | %.1f | %+.1f |\n", key.c_str(),
                errs.first.size(), 100 * a.mape, 100 * a.median, 100 * a.max, 100 * a.bias, 100 * b.mape,
                100 * b.median, 100 * b.max, 100 * b.bias);
  }
  std::printf("\n%zu rows compared, %d rows not covered (no payload, not an nccl-tests collective, or another system)\n",
              rows.size(), skipped);
  return 0;
}
