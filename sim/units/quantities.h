// Dimensioned quantities at module boundaries (bytes, FLOPs, bandwidth), so that a size is never
// passed where a rate is expected. Each is a thin wrapper; the one divide lives in transfer_time().
#pragma once

#include <cstdint>

#include "sim/units/time.h"

namespace mofasim {

struct Bytes {
  double value = 0;  // double: activation and parameter sizes exceed 2^53 only far past any GPU
  friend constexpr Bytes operator+(Bytes a, Bytes b) { return {a.value + b.value}; }
  friend constexpr Bytes operator-(Bytes a, Bytes b) { return {a.value - b.value}; }
  friend constexpr Bytes operator*(Bytes a, double k) { return {a.value * k}; }
  friend constexpr Bytes operator*(double k, Bytes a) { return {a.value * k}; }
  friend constexpr bool operator==(Bytes a, Bytes b) = default;
  friend constexpr auto operator<=>(Bytes a, Bytes b) = default;
};

struct Flops {
  double value = 0;
  friend constexpr Flops operator+(Flops a, Flops b) { return {a.value + b.value}; }
  friend constexpr Flops operator*(Flops a, double k) { return {a.value * k}; }
  friend constexpr bool operator==(Flops a, Flops b) = default;
  friend constexpr auto operator<=>(Flops a, Flops b) = default;
};

struct Bandwidth {
  double bytes_per_second = 0;
};

struct FlopRate {
  double flops_per_second = 0;
};

// The single divide from work to seconds; callers never write size / bandwidth themselves.
inline double transfer_seconds(Bytes size, Bandwidth bw) { return size.value / bw.bytes_per_second; }
inline double compute_seconds(Flops work, FlopRate rate) { return work.value / rate.flops_per_second; }

}  // namespace mofasim
