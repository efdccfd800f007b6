// Random streams for the Monte Carlo injector: xoshiro256++ seeded through splitmix64, one
// independent stream per trial derived from (seed, trial index), so that a trial's draws do not
// depend on which thread runs it or in which order. Header-only: the draws sit in the hot loop.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

namespace mofasim::fault {

// Steele, Lea & Flood (2014) SplitMix64: used to hash (seed, trial) and to fill xoshiro's state.
inline std::uint64_t splitmix64_next(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Blackman & Vigna xoshiro256++ 1.0: 256-bit state, period 2^256 - 1.
class Rng {
 public:
  // The stream of trial `trial` under `seed`: the two are mixed by splitmix64 before seeding, so
  // neighbouring trials and neighbouring seeds give unrelated streams.
  Rng(std::uint64_t seed, std::uint64_t trial) {
    std::uint64_t mix = seed;
    std::uint64_t h = splitmix64_next(mix) ^ (trial * 0xD1B54A32D192ED03ULL);
    for (std::uint64_t& s : s_) s = splitmix64_next(h);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[0] + s_[3], 23) + s_[0];
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform on (0, 1]: never 0, so log(uniform()) is finite.
  double uniform() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }

  // Exponential with rate 1.
  double exponential() { return -std::log(uniform()); }

  // Standard normal by the Box-Muller transform (one of the pair; the other is discarded so that
  // the stream's position does not depend on history).
  double normal() {
    const double r = std::sqrt(-2 * std::log(uniform()));
    return r * std::cos(2 * std::numbers::pi * uniform());
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace mofasim::fault
