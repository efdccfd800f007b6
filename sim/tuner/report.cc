// Table, statistics, CSV and JSON of a tuning run (see report.h).
#include "sim/tuner/report.h"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <cstdio>
#include <ostream>
#include <stdexcept>

#include "sim/units/format.h"

namespace mofasim::tuner {
namespace {

std::string fmt(const char* format, double a) {
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), format, a);
  return buf.data();
}

std::string exact(double v) { return fmt("%.17g", v); }

model::ScheduleKind schedule_from(std::string_view s) {
  for (auto k : {model::ScheduleKind::kGpipe, model::ScheduleKind::k1F1B, model::ScheduleKind::kInterleaved1F1B,
                 model::ScheduleKind::kZbH1, model::ScheduleKind::kDualPipe}) {
    if (to_string(k) == s) return k;
  }
  throw std::invalid_argument("tuner: unknown schedule '" + std::string(s) + "'");
}

model::RecomputeKind recompute_from(std::string_view s) {
  for (auto k : {model::RecomputeKind::kNone, model::RecomputeKind::kSelective, model::RecomputeKind::kFull}) {
    if (to_string(k) == s) return k;
  }
  throw std::invalid_argument("tuner: unknown recompute '" + std::string(s) + "'");
}

OptimizerMode optimizer_from(std::string_view s) {
  for (auto k : {OptimizerMode::kGpu, OptimizerMode::kDistributed, OptimizerMode::kCpu}) {
    if (to_string(k) == s) return k;
  }
  throw std::invalid_argument("tuner: unknown optimizer '" + std::string(s) + "'");
}

constexpr std::array<const char*, 34> kCsvColumns = {
    "id", "tp", "cp", "pp", "vpp", "ep", "dp", "micro_batch", "schedule", "tp_overlap", "cp_overlap",
    "ep_overlap", "pp_overlap", "dp_overlap", "activation_offload", "recompute", "optimizer", "fits",
    "step_time_s", "compute_s", "tp_exposed_s", "cp_exposed_s", "ep_exposed_s", "pp_bubble_s", "pp_exposed_s",
    "dp_exposed_s", "optimizer_s", "tflops_per_gpu", "mfu", "peak_memory_bytes", "ckpt_interval_steps",
    "ckpt_save_time_s", "ettr", "total_time_s"};

std::vector<std::string_view> split(std::string_view line, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = line.find(sep, start);
    out.push_back(line.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

template <class T>
T parse_number(std::string_view s, std::size_t line) {
  T value{};
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    throw std::invalid_argument("tuner CSV line " + std::to_string(line) + ": bad number '" + std::string(s) + "'");
  }
  return value;
}

double parse_double(std::string_view s, std::size_t line) {
  if (s == "inf") return std::numeric_limits<double>::infinity();
  return parse_number<double>(s, line);
}

bool parse_bool(std::string_view s, std::size_t line) {
  if (s == "1") return true;
  if (s == "0") return false;
  throw std::invalid_argument("tuner CSV line " + std::to_string(line) + ": expected 0 or 1, got '" + std::string(s) + "'");
}

template <class T>
T get(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) throw std::invalid_argument(std::string("tuner JSON: missing field '") + key + "'");
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument(std::string("tuner JSON: field '") + key + "' has the wrong type");
  }
}

}  // namespace

std::string format_table(const TuneResult& result, const TuneProblem& problem, int top_k) {
  const bool e2e = !result.ranking.empty() && result.ranked(0).e2e.has_value();
  std::string out;
  out += "  # GPUs   GBS  TP CP PP  EP   DP  v  b schedule     features                                   mem_GiB TFLOPS    step  compute     TP     CP     EP bubble     PP     DP    opt";
  if (e2e) out += "   N_ckpt   ETTR        total";
  out += '\n';
  const std::size_t n = std::min(result.ranking.size(), static_cast<std::size_t>(std::max(top_k, 0)));
  for (std::size_t k = 0; k < n; ++k) {
    const Row& r = result.ranked(k);
    const Layout& l = r.candidate.layout;
    const StepBreakdown& b = r.step.breakdown;
    std::array<char, 512> buf{};
    std::snprintf(buf.data(), buf.size(),
                  "%3zu %5d %5d %3d %2d %2d %3d %4d %2d %2d %-12s %-43s %6.2f %6.2f %7.2f %8.2f %6.2f %6.2f %6.2f "
                  "%6.2f %6.2f %6.2f %6.2f",
                  k + 1, problem.topology.gpus, problem.global_batch, l.tp, l.cp, l.pp, l.ep, l.dp, l.vpp,
                  l.micro_batch, std::string(to_string(l.schedule)).c_str(), feature_label(r.candidate.features).c_str(),
                  r.step.peak_memory_bytes / kBytesPerGiB, r.step.tflops_per_gpu, r.step.step_time_s, b.compute, b.tp_exposed,
                  b.cp_exposed, b.ep_exposed, b.pp_bubble, b.pp_exposed, b.dp_exposed, b.optimizer);
    out += buf.data();
    if (e2e && r.e2e) {
      std::snprintf(buf.data(), buf.size(), " %8lld %6.2f%% %12s", static_cast<long long>(r.e2e->interval_steps),
                    100 * r.e2e->ettr, format_duration(r.e2e->total_s).c_str());
      out += buf.data();
    }
    out += '\n';
  }
  return out;
}

std::string format_stats(const TuneStats& s) {
  std::string out;
  auto line = [&out](const std::string& label, std::uint64_t configs, std::uint64_t layouts, bool with_layouts) {
    out += label;
    out += std::to_string(configs);
    out += " configurations";
    if (with_layouts) out += " (" + std::to_string(layouts) + " layouts)";
    out += '\n';
  };
  if (s.raw_configs == 0 && s.evaluated > 0) {
    // Rows merged from CSV files without a stats line: the space and the removals are not known.
    out += "space: unknown (merged CSV rows carry no counts; the rule and memory counts below are missing)\n";
  } else {
    line("space: ", s.raw_configs, s.raw_layouts, true);
  }
  if (s.shard_configs != s.raw_configs) line("this shard: ", s.shard_configs, s.shard_layouts, true);
  for (int r = 0; r < kReasonCount; ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (s.removed_configs[i] == 0) continue;
    const bool rule = static_cast<Reason>(r) >= kFirstRule;
    line(std::string(rule ? "pruned by " : "violates ") + std::string(to_string(static_cast<Reason>(r))) + ": ",
         s.removed_configs[i], s.removed_layouts[i], s.removed_layouts[i] > 0);
  }
  out += "out of memory: " + std::to_string(s.infeasible_memory()) + " configurations (" +
         std::to_string(s.memory_pruned) + " before evaluation, " + std::to_string(s.memory_checks) +
         " memory checks)\n";
  out += "evaluated: " + std::to_string(s.evaluated) + ", feasible: " + std::to_string(s.feasible) + '\n';
  return out;
}

void write_csv(std::ostream& out, const TuneResult& result) {
  out << kCsvStatsPrefix << to_json(result.stats).dump() << '\n';
  for (std::size_t i = 0; i < kCsvColumns.size(); ++i) out << (i ? "," : "") << kCsvColumns[i];
  out << '\n';
  for (const Row& r : result.rows) {
    const Layout& l = r.candidate.layout;
    const FeatureChoice& f = r.candidate.features;
    const StepBreakdown& b = r.step.breakdown;
    out << r.candidate.id << ',' << l.tp << ',' << l.cp << ',' << l.pp << ',' << l.vpp << ',' << l.ep << ',' << l.dp
        << ',' << l.micro_batch << ',' << to_string(l.schedule) << ',' << f.tp_overlap << ',' << f.cp_overlap << ','
        << f.ep_overlap << ',' << f.pp_overlap << ',' << f.dp_overlap << ',' << f.activation_offload << ','
        << to_string(f.recompute) << ',' << to_string(f.optimizer) << ',' << r.step.fits << ','
        << exact(r.step.step_time_s) << ',' << exact(b.compute) << ',' << exact(b.tp_exposed) << ','
        << exact(b.cp_exposed) << ',' << exact(b.ep_exposed) << ',' << exact(b.pp_bubble) << ','
        << exact(b.pp_exposed) << ',' << exact(b.dp_exposed) << ',' << exact(b.optimizer) << ','
        << exact(r.step.tflops_per_gpu) << ',' << exact(r.step.mfu) << ',' << exact(r.step.peak_memory_bytes);
    if (r.e2e) {
      out << ',' << r.e2e->interval_steps << ',' << exact(r.e2e->save_time_s) << ',' << exact(r.e2e->ettr) << ','
          << exact(r.e2e->total_s);
    } else {
      out << ",,,,";
    }
    out << '\n';
  }
}

std::vector<Row> read_csv(std::string_view text) {
  std::vector<Row> rows;
  bool header_seen = false;
  std::size_t line_no = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.empty() || line.starts_with('#')) continue;
    const std::vector<std::string_view> f = split(line, ',');
    if (f.size() != kCsvColumns.size()) {
      throw std::invalid_argument("tuner CSV line " + std::to_string(line_no) + ": expected " +
                                  std::to_string(kCsvColumns.size()) + " fields, got " + std::to_string(f.size()));
    }
    if (!header_seen) {
      if (f[0] != kCsvColumns[0]) {
        throw std::invalid_argument("tuner CSV line " + std::to_string(line_no) + ": expected the header line");
      }
      header_seen = true;
      continue;
    }
    Row r;
    std::size_t i = 0;
    auto next_int = [&] { return parse_number<int>(f[i++], line_no); };
    auto next_double = [&] { return parse_double(f[i++], line_no); };
    auto next_bool = [&] { return parse_bool(f[i++], line_no); };
    r.candidate.id = parse_number<std::uint64_t>(f[i++], line_no);
    Layout& l = r.candidate.layout;
    l.tp = next_int();
    l.cp = next_int();
    l.pp = next_int();
    l.vpp = next_int();
    l.ep = next_int();
    l.dp = next_int();
    l.micro_batch = next_int();
    l.schedule = schedule_from(f[i++]);
    FeatureChoice& fc = r.candidate.features;
    fc.tp_overlap = next_bool();
    fc.cp_overlap = next_bool();
    fc.ep_overlap = next_bool();
    fc.pp_overlap = next_bool();
    fc.dp_overlap = next_bool();
    fc.activation_offload = next_bool();
    fc.recompute = recompute_from(f[i++]);
    fc.optimizer = optimizer_from(f[i++]);
    r.step.fits = next_bool();
    r.step.step_time_s = next_double();
    StepBreakdown& b = r.step.breakdown;
    b.compute = next_double();
    b.tp_exposed = next_double();
    b.cp_exposed = next_double();
    b.ep_exposed = next_double();
    b.pp_bubble = next_double();
    b.pp_exposed = next_double();
    b.dp_exposed = next_double();
    b.optimizer = next_double();
    r.step.tflops_per_gpu = next_double();
    r.step.mfu = next_double();
    r.step.peak_memory_bytes = next_double();
    if (!f[i].empty()) {
      E2EEstimate e;
      e.interval_steps = parse_number<std::int64_t>(f[i++], line_no);
      e.save_time_s = next_double();
      e.ettr = next_double();
      e.total_s = next_double();
      r.e2e = e;
    }
    rows.push_back(r);
  }
  return rows;
}

std::optional<TuneStats> read_csv_stats(std::string_view text) {
  std::size_t start = 0;
  for (std::size_t line_no = 1; start < text.size(); ++line_no) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (!line.starts_with(kCsvStatsPrefix)) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line.substr(kCsvStatsPrefix.size()));
    } catch (const nlohmann::json::parse_error&) {
      throw std::invalid_argument("tuner CSV line " + std::to_string(line_no) + ": the stats line is not JSON");
    }
    return stats_from_json(j);
  }
  return std::nullopt;
}

nlohmann::json to_json(const Row& r) {
  const Layout& l = r.candidate.layout;
  const FeatureChoice& f = r.candidate.features;
  const StepBreakdown& b = r.step.breakdown;
  nlohmann::json j{
      {"id", r.candidate.id},
      {"layout",
       {{"tp", l.tp}, {"cp", l.cp}, {"pp", l.pp}, {"vpp", l.vpp}, {"ep", l.ep}, {"dp", l.dp},
        {"micro_batch", l.micro_batch}, {"schedule", to_string(l.schedule)}}},
      {"features",
       {{"tp_overlap", f.tp_overlap}, {"cp_overlap", f.cp_overlap}, {"ep_overlap", f.ep_overlap},
        {"pp_overlap", f.pp_overlap}, {"dp_overlap", f.dp_overlap}, {"activation_offload", f.activation_offload},
        {"recompute", to_string(f.recompute)}, {"optimizer", to_string(f.optimizer)}}},
      {"fits", r.step.fits},
      {"step_time_s", r.step.step_time_s},
      {"breakdown",
       {{"compute", b.compute}, {"tp_exposed", b.tp_exposed}, {"cp_exposed", b.cp_exposed},
        {"ep_exposed", b.ep_exposed}, {"pp_bubble", b.pp_bubble}, {"pp_exposed", b.pp_exposed},
        {"dp_exposed", b.dp_exposed}, {"optimizer", b.optimizer}}},
      {"tflops_per_gpu", r.step.tflops_per_gpu},
      {"mfu", r.step.mfu},
      {"peak_memory_bytes", r.step.peak_memory_bytes}};
  if (r.e2e) {
    // JSON has no infinity: a run that cannot converge (MoFa(40)'s denominator <= 0) writes null.
    j["e2e"] = {{"checkpoint_interval_steps", r.e2e->interval_steps}, {"save_time_s", r.e2e->save_time_s},
                {"ettr", r.e2e->ettr},
                {"total_time_s", std::isfinite(r.e2e->total_s) ? nlohmann::json(r.e2e->total_s) : nlohmann::json()}};
  }
  return j;
}

Row row_from_json(const nlohmann::json& j) {
  Row r;
  r.candidate.id = get<std::uint64_t>(j, "id");
  const nlohmann::json& lj = j.at("layout");
  Layout& l = r.candidate.layout;
  l.tp = get<int>(lj, "tp");
  l.cp = get<int>(lj, "cp");
  l.pp = get<int>(lj, "pp");
  l.vpp = get<int>(lj, "vpp");
  l.ep = get<int>(lj, "ep");
  l.dp = get<int>(lj, "dp");
  l.micro_batch = get<int>(lj, "micro_batch");
  l.schedule = schedule_from(get<std::string>(lj, "schedule"));
  const nlohmann::json& fj = j.at("features");
  FeatureChoice& f = r.candidate.features;
  f.tp_overlap = get<bool>(fj, "tp_overlap");
  f.cp_overlap = get<bool>(fj, "cp_overlap");
  f.ep_overlap = get<bool>(fj, "ep_overlap");
  f.pp_overlap = get<bool>(fj, "pp_overlap");
  f.dp_overlap = get<bool>(fj, "dp_overlap");
  f.activation_offload = get<bool>(fj, "activation_offload");
  f.recompute = recompute_from(get<std::string>(fj, "recompute"));
  f.optimizer = optimizer_from(get<std::string>(fj, "optimizer"));
  r.step.fits = get<bool>(j, "fits");
  r.step.step_time_s = get<double>(j, "step_time_s");
  const nlohmann::json& bj = j.at("breakdown");
  StepBreakdown& b = r.step.breakdown;
  b.compute = get<double>(bj, "compute");
  b.tp_exposed = get<double>(bj, "tp_exposed");
  b.cp_exposed = get<double>(bj, "cp_exposed");
  b.ep_exposed = get<double>(bj, "ep_exposed");
  b.pp_bubble = get<double>(bj, "pp_bubble");
  b.pp_exposed = get<double>(bj, "pp_exposed");
  b.dp_exposed = get<double>(bj, "dp_exposed");
  b.optimizer = get<double>(bj, "optimizer");
  r.step.tflops_per_gpu = get<double>(j, "tflops_per_gpu");
  r.step.mfu = get<double>(j, "mfu");
  r.step.peak_memory_bytes = get<double>(j, "peak_memory_bytes");
  if (j.contains("e2e")) {
    const nlohmann::json& ej = j.at("e2e");
    r.e2e = E2EEstimate{.interval_steps = get<std::int64_t>(ej, "checkpoint_interval_steps"),
                        .save_time_s = get<double>(ej, "save_time_s"),
                        .ettr = get<double>(ej, "ettr"),
                        .total_s = ej.contains("total_time_s") && ej.at("total_time_s").is_null()
                                       ? std::numeric_limits<double>::infinity()
                                       : get<double>(ej, "total_time_s")};
  }
  return r;
}

nlohmann::json to_json(const TuneStats& s) {
  nlohmann::json removed = nlohmann::json::object();
  for (int r = 0; r < kReasonCount; ++r) {
    const auto i = static_cast<std::size_t>(r);
    removed[std::string(to_string(static_cast<Reason>(r)))] = {{"configurations", s.removed_configs[i]},
                                                               {"layouts", s.removed_layouts[i]}};
  }
  return {{"raw_layouts", s.raw_layouts},
          {"feature_variants", s.feature_variants},
          {"raw_configurations", s.raw_configs},
          {"shard_layouts", s.shard_layouts},
          {"shard_configurations", s.shard_configs},
          {"removed", removed},
          {"memory_checks", s.memory_checks},
          {"memory_pruned", s.memory_pruned},
          {"evaluated", s.evaluated},
          {"infeasible_after_evaluation", s.infeasible_after_evaluation},
          {"infeasible_memory", s.infeasible_memory()},
          {"feasible", s.feasible}};
}

TuneStats stats_from_json(const nlohmann::json& j) {
  TuneStats s;
  s.raw_layouts = get<std::uint64_t>(j, "raw_layouts");
  s.feature_variants = get<int>(j, "feature_variants");
  s.raw_configs = get<std::uint64_t>(j, "raw_configurations");
  s.shard_layouts = get<std::uint64_t>(j, "shard_layouts");
  s.shard_configs = get<std::uint64_t>(j, "shard_configurations");
  const nlohmann::json& removed = j.at("removed");
  for (int r = 0; r < kReasonCount; ++r) {
    const auto i = static_cast<std::size_t>(r);
    const std::string name(to_string(static_cast<Reason>(r)));
    if (!removed.contains(name)) throw std::invalid_argument("tuner JSON: missing removed." + name);
    s.removed_configs[i] = get<std::uint64_t>(removed.at(name), "configurations");
    s.removed_layouts[i] = get<std::uint64_t>(removed.at(name), "layouts");
  }
  s.memory_checks = get<std::uint64_t>(j, "memory_checks");
  s.memory_pruned = get<std::uint64_t>(j, "memory_pruned");
  s.evaluated = get<std::uint64_t>(j, "evaluated");
  s.infeasible_after_evaluation = get<std::uint64_t>(j, "infeasible_after_evaluation");
  s.feasible = get<std::uint64_t>(j, "feasible");
  return s;
}

nlohmann::json to_json(const TuneResult& result, int top_k) {
  nlohmann::json top = nlohmann::json::array();
  const std::size_t n = std::min(result.ranking.size(), static_cast<std::size_t>(std::max(top_k, 0)));
  for (std::size_t k = 0; k < n; ++k) top.push_back(to_json(result.ranked(k)));
  return {{"stats", to_json(result.stats)}, {"top", top}};
}

}  // namespace mofasim::tuner
