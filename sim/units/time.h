// Simulated time: integer nanoseconds, with instants (Time) distinct from spans (Duration).
// This header is the only place the tick size is decided; cost models speak seconds (double)
// and cross into simulated time through from_seconds(), the single rounding rule.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace mofasim {

// Not a real clock: it only names the epoch (t = 0 is the start of the simulated run).
struct SimClock {
  using rep = std::int64_t;
  using period = std::nano;
  using duration = std::chrono::duration<rep, period>;
  using time_point = std::chrono::time_point<SimClock>;
  static constexpr bool is_steady = true;
};

using Duration = SimClock::duration;    // span: Duration + Duration, Duration * int
using Time = SimClock::time_point;      // instant: Time + Duration, Time - Time -> Duration

inline constexpr Time kTimeZero{};
inline constexpr Time kTimeMax = Time::max();

// Rounds to the nearest nanosecond. Throws std::domain_error on NaN, negative or a value that
// does not fit in 64-bit nanoseconds (about 292 years).
inline Duration from_seconds(double seconds) {
  if (std::isnan(seconds)) throw std::domain_error("from_seconds: NaN duration");
  if (seconds < 0) throw std::domain_error("from_seconds: negative duration " + std::to_string(seconds));
  const double ns = std::nearbyint(seconds * 1e9);
  // 2^63 ns is about 9.22e18; reject anything that would not round-trip.
  if (!(ns < 9.2e18)) throw std::domain_error("from_seconds: duration too large " + std::to_string(seconds));
  return Duration{static_cast<std::int64_t>(ns)};
}

// Exact conversion back to seconds (within double precision).
inline constexpr double to_seconds(Duration d) { return static_cast<double>(d.count()) * 1e-9; }
inline constexpr double to_seconds(Time t) { return to_seconds(t.time_since_epoch()); }

inline constexpr Time at_ns(std::int64_t ns) { return Time{Duration{ns}}; }

}  // namespace mofasim
