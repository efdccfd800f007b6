// ProgressReporter: one updating line on stderr for work that can take more than a couple of
// seconds ("monte carlo  45%  4500/10000 trials  1.2 k trials/s  ETA 4 s"). It prints only when
// enabled — by default when stderr is a terminal and the user did not pass -q — and at most once
// per `min_interval_s`, so callers may call update() as often as they like; callers in a hot loop
// still call it only every few thousand items, because even a disabled call costs a branch and an
// enabled one reads the clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

namespace mofasim::progress {

// True when `fd` is a terminal (isatty). stderr is fd 2.
bool is_terminal(int fd);

// Whether a command shows progress: not with -q/--quiet, and only on a terminal.
bool enabled_for_stderr(bool quiet);

struct ReporterOptions {
  bool enabled = false;
  std::ostream* out = nullptr;  // where the line goes; nullptr = std::cerr
  double min_interval_s = 0.1;  // at most ~10 updates per second
  // Seconds since an arbitrary origin; unset = std::chrono::steady_clock. Tests pass a fake.
  std::function<double()> clock{};
};

class ProgressReporter {
 public:
  static constexpr double kSteadyAfterS = 0.2;

  // `label` names the work ("monte carlo"), `unit` its items ("trials"); `total` > 0 items.
  ProgressReporter(std::string label, std::string unit, std::int64_t total, ReporterOptions options);
  // The usual construction: enabled_for_stderr(quiet), writing to std::cerr.
  static ProgressReporter for_stderr(std::string label, std::string unit, std::int64_t total, bool quiet);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;
  ProgressReporter(ProgressReporter&&) = default;
  ProgressReporter& operator=(ProgressReporter&&) = delete;

  // `done` items of `total` are finished. Redraws the line if the last draw is older than
  // min_interval_s; reaching `total` draws the final line and ends it with a newline.
  void update(std::int64_t done);
  // Ends the line (newline) if anything was drawn and the work stopped before `total`.
  void finish();
  // For work whose size is known only once it has started (the layers report it with progress).
  void set_total(std::int64_t total) { total_ = total > 0 ? total : 1; }

  [[nodiscard]] bool enabled() const { return options_.enabled; }
  // The text of the line for `done` items after `elapsed_s` seconds (no "\r", no padding). Rate
  // and ETA appear from kSteadyAfterS on: earlier they are mostly noise.
  [[nodiscard]] std::string line(std::int64_t done, double elapsed_s) const;

 private:
  [[nodiscard]] double now() const;
  void draw(std::int64_t done, double t);

  std::string label_;
  std::string unit_;
  std::int64_t total_;
  ReporterOptions options_;
  double start_ = 0;
  double last_draw_ = -1e300;
  std::size_t last_width_ = 0;
  bool drawn_ = false;
  bool finished_ = false;
};

// A (done, total) callback for the layers' progress hooks that draws one ProgressReporter on
// stderr, started when the callback is made (the total comes with each call). Empty — so the hook costs nothing —
// when progress is off (quiet or not a terminal).
std::function<void(std::int64_t done, std::int64_t total)> stderr_callback(std::string label, std::string unit,
                                                                           bool quiet);

}  // namespace mofasim::progress
