// The open-set validation: read, map, predict, group, render (see measured_open_validate.h).
#include "sim/analysis/measured_open_validate.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "sim/analysis/input_file.h"
#include "sim/analysis/measured_open_quantity.h"
#include "sim/analysis/measured_open_split.h"
#include "sim/analysis/measured_report.h"
#include "sim/analysis/step_prediction_json.h"
#include "sim/units/format.h"

namespace mofasim::analysis {
namespace {

std::string kind_of(const OpenRun& r) { return r.is_moe() ? "MoE" : "dense"; }

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string joined(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// The number after an id's last '-' ("O-ILM-07" -> 7), or -1 when there is none of 1 to 9 digits.
long id_number(const std::string& id, std::string& prefix) {
  const auto dash = id.rfind('-');
  const std::string digits = dash == std::string::npos ? "" : id.substr(dash + 1);
  prefix = dash == std::string::npos ? id : id.substr(0, dash + 1);
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stol(digits);
}

// "O-SMXB-01..44, O-MBR-01..15, O-MLP-05": runs of consecutive ids of one source written once.
std::string id_ranges(const std::vector<std::string>& ids) {
  std::string out;
  std::size_t i = 0;
  while (i < ids.size()) {
    std::string prefix;
    const long first = id_number(ids[i], prefix);
    std::size_t j = i;
    while (first >= 0 && j + 1 < ids.size()) {
      std::string next_prefix;
      const long next = id_number(ids[j + 1], next_prefix);
      if (next_prefix != prefix || next != first + static_cast<long>(j - i) + 1) break;
      ++j;
    }
    out += (out.empty() ? "" : ", ") + ids[i];
    if (j > i) out += ".." + ids[j].substr(prefix.size());
    i = j + 1;
  }
  return out;
}

ErrorStats stats_of(const std::vector<const OpenComparison*>& rows) {
  std::vector<double> ape;
  std::vector<double> slower;
  for (const OpenComparison* c : rows) {
    ape.push_back(std::abs(c->error_percent()));
    slower.push_back(c->slower_percent());
  }
  return error_stats(ape, slower);
}

std::ofstream open_output(const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(path + ": cannot open for writing");
  return out;
}

const char* predictor_name(MeasuredPredictorKind kind) {
  return kind == MeasuredPredictorKind::kSimulated ? "simulated" : "analytic";
}

}  // namespace

double OpenComparison::error_percent() const {
  return (predicted_value - run.measured_value) / run.measured_value * 100.0;
}

double OpenComparison::slower_percent() const {
  return is_throughput(run.quantity) ? -error_percent() : error_percent();
}

int OpenValidation::predicted_count() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const auto& c) { return c.predicted(); }));
}

bool measured_file_is_open_set(const std::string& path) {
  return is_open_runs_csv(read_input_file(path, "measured-iteration file"));
}

bool measured_files_are_open_set(const std::vector<std::string>& paths) {
  if (paths.empty()) return false;
  const bool first = measured_file_is_open_set(paths.front());
  for (const std::string& p : paths) {
    if (measured_file_is_open_set(p) != first) {
      throw InputError("--measured: " + paths.front() + " is in the " + (first ? "open-set" : "vTrain") +
                       " format but " + p + " is not; give files of one format");
    }
  }
  return first;
}

OpenValidation run_open_validation(const std::vector<std::string>& paths, const StepPredictor& predict,
                                   const std::function<void(std::int64_t, std::int64_t)>& progress) {
  OpenValidation v;
  for (const std::string& path : paths) {
    const std::string text = read_input_file(path, "measured-iteration file");
    std::vector<OpenRun> runs;
    try {
      runs = parse_open_runs_csv(text, path);
    } catch (const std::invalid_argument& e) {
      throw InputError(e.what());  // located at path:line already
    }
    for (OpenRun& r : runs) v.rows.push_back({.run = std::move(r)});
  }
  for (OpenComparison& c : v.rows) c.mapped = map_open_run(c.run);
  const auto total = static_cast<std::int64_t>(v.rows.size());
  std::int64_t done = 0;
  for (OpenComparison& c : v.rows) {
    if (c.mapped.spec) {
      StepPrediction t;
      try {
        t = repeat_pipeline_flushes(predict(*c.mapped.spec), c.mapped.pipeline_flushes);
      } catch (const std::invalid_argument& e) {
        // A row the step models refuse is listed with why; the file's other rows are still compared.
        c.mapped.reasons.push_back("the step model refused the row: " + std::string(e.what()));
        c.mapped.spec.reset();
        if (progress) progress(++done, total);
        continue;
      }
      c.predicted_step_s = t.step_s;
      c.breakdown = t.breakdown;
      c.predicted_value = predicted_quantity(c.run, t.step_s, c.mapped.recompute);
      c.measured_step_s = measured_step_seconds(c.run, c.mapped.recompute);
    }
    if (progress) progress(++done, total);
  }
  // Groups, in a fixed order: all; fit, test; sources, GPUs and kinds in order of first appearance.
  std::vector<std::pair<std::string, std::string>> keys = {{"all", "all"}, {"split", "fit"}, {"split", "test"}};
  auto add_key = [&](const std::string& grouping, const std::string& name) {
    if (std::find(keys.begin(), keys.end(), std::pair{grouping, name}) == keys.end()) keys.emplace_back(grouping, name);
  };
  for (const auto& c : v.rows) add_key("source", c.run.source_group());
  for (const auto& c : v.rows) add_key("gpu", c.mapped.gpu_family);
  add_key("kind", "dense");
  add_key("kind", "MoE");
  for (const auto& [grouping, name] : keys) {
    std::vector<const OpenComparison*> members;
    for (const auto& c : v.rows) {
      const std::string key = grouping == "all"      ? "all"
                              : grouping == "split"  ? c.mapped.split
                              : grouping == "source" ? c.run.source_group()
                              : grouping == "gpu"    ? c.mapped.gpu_family
                                                     : kind_of(c.run);
      if (c.predicted() && key == name) members.push_back(&c);
    }
    // A group with no predicted row (a GPU without a preset, ...) has no statistics to show; its
    // rows are in the not-expressible list.
    if (members.empty() && grouping != "all") continue;
    v.stats.push_back({grouping, name, stats_of(members)});
  }
  std::map<std::string, std::vector<std::string>> by_reason;
  for (const auto& c : v.rows) {
    for (const auto& why : c.mapped.reasons) by_reason[why].push_back(c.run.id);
  }
  v.not_expressible.assign(by_reason.begin(), by_reason.end());
  std::stable_sort(v.not_expressible.begin(), v.not_expressible.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  return v;
}

std::string open_report_markdown(const OpenValidation& v) {
  std::ostringstream out;
  const auto heading = [](const std::string& grouping) {
    if (grouping == "split") return "split (fit: the declared training subset; test: held out)";
    if (grouping == "source") return "source";
    if (grouping == "gpu") return "GPU";
    if (grouping == "kind") return "dense / MoE";
    return "all";
  };
  out << "Error in each row's own measured quantity; bias + = the model predicts a slower run.\n";
  std::string current;
  for (const auto& s : v.stats) {
    if (s.grouping != current) {
      current = s.grouping;
      out << "\n| " << heading(current) << " | rows | MAPE % | median % | max % | bias % |\n";
      out << "| --- | ---: | ---: | ---: | ---: | ---: |\n";
    }
    out << "| " << s.name << " | " << s.stats.count << " | " << format_number("%.2f", s.stats.mape) << " | "
        << format_number("%.2f", s.stats.median_ape) << " | " << format_number("%.2f", s.stats.max_ape) << " | "
        << format_number("%+.2f", s.stats.mean_signed) << " |\n";
  }
  const int missing = static_cast<int>(v.rows.size()) - v.predicted_count();
  out << "\nNot expressible yet: " << missing << " of " << v.rows.size()
      << " rows (a row is listed under every reason it has)\n\n";
  out << "| reason | rows | ids |\n| --- | ---: | --- |\n";
  for (const auto& [why, ids] : v.not_expressible) {
    out << "| " << why << " | " << ids.size() << " | " << id_ranges(ids) << " |\n";
  }
  return out.str();
}

void write_open_csv(std::ostream& out, const OpenValidation& v) {
  out << "id,split,source,gpu,kind,gpus,quantity,measured,predicted,error_percent,measured_step_s,predicted_step_s,";
  for (const BreakdownField& f : kBreakdownFields) out << f.name << ',';
  out << "not_expressible\n";
  const std::string no_breakdown(kBreakdownFields.size(), ',');
  for (const auto& c : v.rows) {
    out << csv_cell(c.run.id) << ',' << c.mapped.split << ',' << csv_cell(c.run.source_group()) << ','
        << csv_cell(c.mapped.gpu_family) << ',' << kind_of(c.run) << ',' << c.run.gpus << ','
        << open_quantity_name(c.run.quantity) << ',' << format_number("%g", c.run.measured_value) << ',';
    if (c.predicted()) {
      out << format_number("%.6g", c.predicted_value) << ',' << format_number("%.2f", c.error_percent()) << ','
          << format_number("%.6g", c.measured_step_s) << ',' << format_number("%.6g", *c.predicted_step_s) << ',';
      if (c.breakdown) {
        for (const BreakdownField& f : kBreakdownFields) out << format_number("%.6g", (*c.breakdown).*f.seconds) << ',';
      } else {
        out << no_breakdown;
      }
      out << '\n';
    } else {
      out << ",,,," << no_breakdown << csv_cell(joined(c.mapped.reasons, "; ")) << '\n';
    }
  }
}

nlohmann::json open_json(const OpenValidation& v, const std::string& predictor) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : v.rows) {
    nlohmann::json r = {{"id", c.run.id},
                        {"line", c.run.line},
                        {"split", c.mapped.split},
                        {"source", c.run.source_group()},
                        {"gpu", c.mapped.gpu_family},
                        {"kind", kind_of(c.run)},
                        {"gpus", c.run.gpus},
                        {"quantity", open_quantity_name(c.run.quantity)},
                        {"measured", c.run.measured_value}};
    if (c.predicted()) {
      r["predicted"] = c.predicted_value;
      r["error_percent"] = c.error_percent();
      r["measured_step_s"] = c.measured_step_s;
      r["predicted_step_s"] = *c.predicted_step_s;
      if (c.breakdown) r["breakdown"] = breakdown_json(*c.breakdown);
    } else {
      r["not_expressible"] = c.mapped.reasons;
    }
    rows.push_back(std::move(r));
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& s : v.stats) {
    groups.push_back({{"grouping", s.grouping},
                      {"name", s.name},
                      {"rows", s.stats.count},
                      {"mape_percent", s.stats.mape},
                      {"median_ape_percent", s.stats.median_ape},
                      {"max_ape_percent", s.stats.max_ape},
                      {"bias_slower_percent", s.stats.mean_signed}});
  }
  nlohmann::json reasons = nlohmann::json::array();
  for (const auto& [why, ids] : v.not_expressible) reasons.push_back({{"reason", why}, {"ids", ids}});
  return {{"format", "open-set"},       {"predictor", predictor},
          {"rows", rows},               {"groups", groups},
          {"not_expressible", reasons}, {"predicted_rows", v.predicted_count()}};
}

std::string open_scatter_svg(const OpenValidation& v, const std::string& predictor) {
  // The vTrain scatter, fed with step times: exact for step_s and tokens/s rows, through the row's
  // own FLOP convention for TFLOPS rows.
  std::vector<MeasuredComparison> points;
  for (const auto& c : v.rows) {
    if (!c.predicted()) continue;
    MeasuredRow row{.source = c.run.id, .line = c.run.line, .gpus = c.run.gpus, .iteration_time_s = c.measured_step_s};
    points.push_back({.row = row,
                      .subset = c.run.gpus <= c.run.gpus_per_node ? "single-node" : "multi-node",
                      .predicted_s = *c.predicted_step_s});
  }
  return scatter_svg(points, {.title = "Open set: step time, " + predictor + " vs measured",
                              .y_label = predictor + " (ms)"});
}

int validate_open_command(const MeasuredValidateOptions& options, std::ostream& out, bool json) {
  const StepPredictor predict = options.predictor == MeasuredPredictorKind::kSimulated ? simulated_step_predictor()
                                                                                       : analytic_step_predictor();
  const OpenValidation v = run_open_validation(options.measured, predict, options.progress);
  const std::string name = predictor_name(options.predictor);
  if (options.csv_path) {
    std::ofstream f = open_output(*options.csv_path);
    write_open_csv(f, v);
    f.close();
    if (!f) throw std::runtime_error(*options.csv_path + ": write failed");
  }
  if (options.svg_path) {
    std::ofstream f = open_output(*options.svg_path);
    f << open_scatter_svg(v, name);
    f.close();
    if (!f) throw std::runtime_error(*options.svg_path + ": write failed");
  }
  if (json) {
    nlohmann::json j = open_json(v, name);
    if (options.csv_path) j["csv"] = *options.csv_path;
    if (options.svg_path) j["svg"] = *options.svg_path;
    out << j.dump(2) << "\n";
  } else {
    out << "Open set: " << v.rows.size() << " rows, " << v.predicted_count() << " predicted, predictor: " << name
        << ", shipped presets\n\n";
    out << open_report_markdown(v);
    if (options.csv_path) out << "\nper-row CSV: " << *options.csv_path << '\n';
    if (options.svg_path) out << "scatter SVG: " << *options.svg_path << '\n';
  }
  // A row the reader could not read is in the report with its reason; as bad input it also goes to
  // stderr, one line each, and the command exits 2 once every output is written.
  int status = 0;
  for (const OpenComparison& c : v.rows) {
    if (c.run.unreadable.empty()) continue;
    std::cerr << c.run.unreadable << '\n';
    status = 2;
  }
  return status;
}

}  // namespace mofasim::analysis
