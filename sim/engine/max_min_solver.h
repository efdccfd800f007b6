// MaxMinSolver: max-min fair rates by progressive filling (water-filling), as in SimGrid's LMM.
//
// Problem: variables v (activities) with an optional upper bound b_v, resources r with capacity
// C_r > 0, and uses (v, r, w) meaning "v consumes w units of r per unit of its own work".
// Constraint: for every r, sum_v w_vr * rate_v <= C_r. Max-min fairness: all unfrozen variables
// grow at the same rate; when a resource saturates (or a variable reaches its bound) the variables
// on it freeze at the current level, the rest keep growing. A variable alone on a resource gets
// C_r / w. Ties between resources saturating at the same level are broken by the lower index,
// ties between bounds by the lower variable index, so the result is deterministic.
//
// Cost: O(U log U) for U uses, using a lazy min-heap of resource levels. Scratch buffers are kept
// between solves, so repeated solves of similar size do not allocate.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace mofasim::sim {

class MaxMinSolver {
 public:
  static constexpr double kNoBound = std::numeric_limits<double>::infinity();

  // Forgets the previous problem (keeps the buffers).
  void clear();
  // Returns the new resource's local index (0, 1, ...). capacity > 0 (checked).
  std::uint32_t add_resource(double capacity);
  // Returns the new variable's local index. bound > 0 or kNoBound (checked).
  std::uint32_t add_variable(double bound = kNoBound);
  // weight > 0 (checked). Every variable needs at least one use or a finite bound.
  void add_use(std::uint32_t variable, std::uint32_t resource, double weight);
  // Computes the rates. Every rate is finite and > 0 (checked).
  void solve();

  [[nodiscard]] double rate(std::uint32_t variable) const { return rate_[variable]; }
  [[nodiscard]] std::size_t variables() const { return bound_.size(); }

 private:
  struct Use {
    std::uint32_t variable;
    std::uint32_t resource;
    double weight;
  };
  struct Level {
    double level;
    std::uint32_t resource;
    std::uint32_t version;
  };
  void freeze(std::uint32_t variable, double level);
  void push_level(std::uint32_t resource);

  // Problem.
  std::vector<double> capacity_;
  std::vector<double> bound_;
  std::vector<Use> uses_;
  // Scratch (CSR adjacency both ways, residual state, lazy heap).
  std::vector<std::uint32_t> var_begin_, res_begin_;
  std::vector<Use> by_var_, by_res_;
  std::vector<double> cap_left_, weight_left_, rate_;
  std::vector<std::uint32_t> count_left_, version_, touched_stamp_, touched_, bounded_;
  std::vector<std::uint8_t> frozen_;
  std::vector<Level> heap_;
  std::uint32_t stamp_ = 0;
  std::size_t unfrozen_ = 0;
};

}  // namespace mofasim::sim
