#include "sim/progress/progress_reporter.h"

#include <unistd.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <utility>

#include "sim/units/format.h"

namespace mofasim::progress {

namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// "950", "12.3 k", "4.56 M": rates and counts short enough for one line.
std::string short_count(double v) {
  if (v >= 1e9) return format_number("%.2f G", v / 1e9);
  if (v >= 1e6) return format_number("%.2f M", v / 1e6);
  if (v >= 1e4) return format_number("%.1f k", v / 1e3);
  return format_number("%.0f", v);
}

// "42 s", "3 min 20 s", "1 h 05 min": an ETA needs no more precision than that.
std::string eta_text(double s) {
  const auto t = static_cast<std::int64_t>(std::llround(s));
  if (t < 60) return std::to_string(t) + " s";
  if (t < 3600) return std::to_string(t / 60) + " min " + std::to_string(t % 60) + " s";
  return std::to_string(t / 3600) + " h " + format_number("%02.0f", static_cast<double>((t % 3600) / 60)) + " min";
}

}  // namespace

bool is_terminal(int fd) { return ::isatty(fd) == 1; }

bool enabled_for_stderr(bool quiet) { return !quiet && is_terminal(STDERR_FILENO); }

ProgressReporter::ProgressReporter(std::string label, std::string unit, std::int64_t total, ReporterOptions options)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total > 0 ? total : 1), options_(std::move(options)) {
  if (options_.out == nullptr) options_.out = &std::cerr;
  start_ = now();
}

ProgressReporter ProgressReporter::for_stderr(std::string label, std::string unit, std::int64_t total, bool quiet) {
  return ProgressReporter(std::move(label), std::move(unit), total, {.enabled = enabled_for_stderr(quiet)});
}

ProgressReporter::~ProgressReporter() { finish(); }

double ProgressReporter::now() const { return options_.clock ? options_.clock() : steady_seconds(); }

std::string ProgressReporter::line(std::int64_t done, double elapsed_s) const {
  const double fraction = static_cast<double>(done) / static_cast<double>(total_);
  std::string s = label_ + "  " + format_number("%3.0f%%", 100 * fraction) + "  " + std::to_string(done) + "/" +
                  std::to_string(total_) + " " + unit_;
  if (elapsed_s >= kSteadyAfterS && done > 0) {
    const double rate = static_cast<double>(done) / elapsed_s;
    s += "  " + short_count(rate) + " " + unit_ + "/s";
    if (done < total_) s += "  ETA " + eta_text(static_cast<double>(total_ - done) / rate);
  }
  return s;
}

void ProgressReporter::draw(std::int64_t done, double t) {
  const std::string text = line(done, t - start_);
  // Blank out the rest of a longer previous line.
  const std::size_t pad = last_width_ > text.size() ? last_width_ - text.size() : 0;
  *options_.out << "\r" << text << std::string(pad, ' ') << std::flush;
  last_width_ = text.size();
  last_draw_ = t;
  drawn_ = true;
}

void ProgressReporter::update(std::int64_t done) {
  if (!options_.enabled || finished_) return;
  const double t = now();
  if (done >= total_) {
    draw(total_, t);
    *options_.out << "\n" << std::flush;
    finished_ = true;
    return;
  }
  if (t - last_draw_ >= options_.min_interval_s) draw(done, t);
}

void ProgressReporter::finish() {
  if (finished_) return;
  finished_ = true;
  if (options_.enabled && drawn_) *options_.out << "\n" << std::flush;
}

std::function<void(std::int64_t, std::int64_t)> stderr_callback(std::string label, std::string unit, bool quiet) {
  if (!enabled_for_stderr(quiet)) return {};
  auto reporter = std::make_shared<ProgressReporter>(std::move(label), std::move(unit), 1, ReporterOptions{.enabled = true});
  return [reporter](std::int64_t done, std::int64_t total) {
    reporter->set_total(total);
    reporter->update(done);
  };
}

}  // namespace mofasim::progress
