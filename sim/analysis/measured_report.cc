// CSV, Markdown and SVG renderings of a predicted-versus-measured comparison.
#include "sim/analysis/measured_report.h"
#include "sim/units/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace mofasim::analysis {
namespace {

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

void write_comparison_csv(std::ostream& out, std::span<const MeasuredComparison> rows, std::string_view predictor) {
  out << "source,line,subset,gpus,global_batch,micro_batch,hidden_size,attention_heads,layers,seq_length,tp,dp,pp,"
         "parameters_billion,measured_ms,"
      << predictor << "_ms,error_percent";
  for (const BreakdownField& f : kBreakdownFields) {
    const std::string name = f.name;  // "compute_s" -> "compute_ms": the file's unit
    out << ',' << name.substr(0, name.size() - 1) << "ms";
  }
  out << '\n';
  for (const auto& c : rows) {
    const MeasuredRow& r = c.row;
    out << csv_cell(r.source) << ',' << r.line << ',' << csv_cell(c.subset) << ',' << r.gpus << ',' << r.global_batch
        << ',' << r.micro_batch << ',' << r.hidden_size << ',' << r.attention_heads << ',' << r.layers << ','
        << r.seq_length << ',' << r.tp << ',' << r.dp << ',' << r.pp << ','
        << (r.parameters_billion ? format_number("%g", *r.parameters_billion) : std::string()) << ','
        << format_number("%.3f", r.iteration_time_s * 1e3) << ',' << format_number("%.3f", c.predicted_s * 1e3) << ','
        << format_number("%.2f", c.signed_percent_error());
    for (const BreakdownField& f : kBreakdownFields) {
      out << ',' << (c.breakdown ? format_number("%.3f", (*c.breakdown).*f.seconds * 1e3) : std::string());
    }
    out << '\n';
  }
}

std::string subset_table_markdown(std::span<const SubsetStats> stats) {
  std::ostringstream out;
  out << "| subset | rows | MAPE % | median % | max % | bias % |\n";
  out << "| --- | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& s : stats) {
    out << "| " << s.name << " | " << s.stats.count << " | " << format_number("%.2f", s.stats.mape) << " | "
        << format_number("%.2f", s.stats.median_ape) << " | " << format_number("%.2f", s.stats.max_ape) << " | "
        << format_number("%+.2f", s.stats.mean_signed) << " |\n";
  }
  return out.str();
}

std::string scatter_svg(std::span<const MeasuredComparison> rows, const ScatterOptions& options) {
  if (options.width < 200 || options.height < 200) {
    throw std::invalid_argument("scatter_svg: width and height must be >= 200 pixels");
  }
  // Axis range: whole decades (ms) around every measured and predicted value.
  double lo = 1e300;
  double hi = 0;
  for (const auto& c : rows) {
    for (double v : {c.row.iteration_time_s * 1e3, c.predicted_s * 1e3}) {
      if (v > 0) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    }
  }
  if (hi <= 0) {
    lo = 1;
    hi = 10;
  }
  const int dmin = static_cast<int>(std::floor(std::log10(lo)));
  const int dmax = std::max(dmin + 1, static_cast<int>(std::ceil(std::log10(hi))));
  const double left = 70;
  const double right = 20;
  const double top = 40;
  const double bottom = 55;
  const double pw = options.width - left - right;
  const double ph = options.height - top - bottom;
  auto x_of = [&](double ms) { return left + (std::log10(ms) - dmin) / (dmax - dmin) * pw; };
  auto y_of = [&](double ms) { return top + ph - (std::log10(ms) - dmin) / (dmax - dmin) * ph; };

  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << options.width << "\" height=\"" << options.height
    << "\" viewBox=\"0 0 " << options.width << ' ' << options.height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"" << format_number("%.1f", left + pw / 2) << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">"
    << xml_escape(options.title) << "</text>\n";
  // Grid and decade labels.
  for (int d = dmin; d <= dmax; ++d) {
    const double v = std::pow(10.0, d);
    const std::string label = format_number("%g", v);
    s << "<line x1=\"" << format_number("%.1f", x_of(v)) << "\" y1=\"" << format_number("%.1f", top) << "\" x2=\"" << format_number("%.1f", x_of(v))
      << "\" y2=\"" << format_number("%.1f", top + ph) << "\" stroke=\"#ddd\"/>\n";
    s << "<line x1=\"" << format_number("%.1f", left) << "\" y1=\"" << format_number("%.1f", y_of(v)) << "\" x2=\"" << format_number("%.1f", left + pw)
      << "\" y2=\"" << format_number("%.1f", y_of(v)) << "\" stroke=\"#ddd\"/>\n";
    s << "<text x=\"" << format_number("%.1f", x_of(v)) << "\" y=\"" << format_number("%.1f", top + ph + 18)
      << "\" text-anchor=\"middle\">" << label << "</text>\n";
    s << "<text x=\"" << format_number("%.1f", left - 8) << "\" y=\"" << format_number("%.1f", y_of(v) + 4) << "\" text-anchor=\"end\">"
      << label << "</text>\n";
  }
  s << "<rect x=\"" << format_number("%.1f", left) << "\" y=\"" << format_number("%.1f", top) << "\" width=\"" << format_number("%.1f", pw)
    << "\" height=\"" << format_number("%.1f", ph) << "\" fill=\"none\" stroke=\"#333\"/>\n";
  // y = x and the ±10% band, clipped to the plot.
  const double a = std::pow(10.0, dmin);
  const double b = std::pow(10.0, dmax);
  auto diagonal = [&](double factor, const char* style) {
    const double x0 = factor >= 1 ? a : a / factor;  // keep y = factor·x inside [a, b]
    const double x1 = factor >= 1 ? b / factor : b;
    s << "<line x1=\"" << format_number("%.1f", x_of(x0)) << "\" y1=\"" << format_number("%.1f", y_of(x0 * factor)) << "\" x2=\""
      << format_number("%.1f", x_of(x1)) << "\" y2=\"" << format_number("%.1f", y_of(x1 * factor)) << "\" " << style << "/>\n";
  };
  diagonal(1.0, "stroke=\"#333\" stroke-width=\"1.2\"");
  diagonal(1.1, "stroke=\"#999\" stroke-dasharray=\"4 3\"");
  diagonal(1.0 / 1.1, "stroke=\"#999\" stroke-dasharray=\"4 3\"");
  // Points: single-node first so the fewer multi-node points stay visible on top.
  const char* kSingleColour = "#1f77b4";
  const char* kMultiColour = "#d62728";
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& c : rows) {
      const bool single = c.subset == "single-node";
      if (single != (pass == 0) || c.predicted_s <= 0) continue;
      s << "<circle cx=\"" << format_number("%.1f", x_of(c.row.iteration_time_s * 1e3)) << "\" cy=\""
        << format_number("%.1f", y_of(c.predicted_s * 1e3)) << "\" r=\"" << (single ? "2.2" : "3.2") << "\" fill=\""
        << (single ? kSingleColour : kMultiColour) << "\" fill-opacity=\"0.55\"/>\n";
    }
  }
  // Axis titles and legend.
  s << "<text x=\"" << format_number("%.1f", left + pw / 2) << "\" y=\"" << options.height - 12
    << "\" text-anchor=\"middle\">measured (ms)</text>\n";
  s << "<text transform=\"translate(18 " << format_number("%.1f", top + ph / 2) << ") rotate(-90)\" text-anchor=\"middle\">"
    << xml_escape(options.y_label) << "</text>\n";
  const double lx = left + 12;
  const double ly = top + 16;
  s << "<circle cx=\"" << format_number("%.1f", lx) << "\" cy=\"" << format_number("%.1f", ly) << "\" r=\"4\" fill=\"" << kSingleColour
    << "\"/><text x=\"" << format_number("%.1f", lx + 10) << "\" y=\"" << format_number("%.1f", ly + 4) << "\">single node</text>\n";
  s << "<circle cx=\"" << format_number("%.1f", lx) << "\" cy=\"" << format_number("%.1f", ly + 18) << "\" r=\"4\" fill=\"" << kMultiColour
    << "\"/><text x=\"" << format_number("%.1f", lx + 10) << "\" y=\"" << format_number("%.1f", ly + 22) << "\">multi node</text>\n";
  s << "<line x1=\"" << format_number("%.1f", lx - 6) << "\" y1=\"" << format_number("%.1f", ly + 36) << "\" x2=\"" << format_number("%.1f", lx + 6)
    << "\" y2=\"" << format_number("%.1f", ly + 36) << "\" stroke=\"#999\" stroke-dasharray=\"4 3\"/><text x=\""
    << format_number("%.1f", lx + 10) << "\" y=\"" << format_number("%.1f", ly + 40) << "\">y = x ± 10%</text>\n";
  s << "</svg>\n";
  return s.str();
}

}  // namespace mofasim::analysis
