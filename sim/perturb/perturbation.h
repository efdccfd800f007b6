// Perturbations of a healthy cluster (issue 17): stragglers (GPUs whose compute runs slower by a
// factor: chosen ranks, a seeded random fraction of all GPUs, whole nodes or supernodes) and
// degraded links (one GPU's NVLink, a node's NIC or spine port running at a fraction of its
// bandwidth). PerturbationSpec is what the scenario says; resolve() turns it, on a Topology, into
// a per-GPU compute factor and a per-link capacity fraction that the step replay applies, and the
// set of GPUs whose timeline may differ from a healthy one (what the replay must not fold away).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "topology/topology.h"
#include "topology/topology_spec.h"

namespace mofasim::perturb {

// Slow GPUs: exactly one selector (ranks, fraction, nodes or supernodes) is given.
struct SlowGpus {
  std::string name{};              // shown in the breakdown; default "slow[i]"
  std::vector<int> ranks{};        // global ranks (== GPU ids)
  std::optional<double> fraction{};// this share of all GPUs, drawn with `seed`
  std::uint64_t seed = 1;
  std::vector<int> nodes{};
  std::vector<int> supernodes{};
  double slowdown = 1;             // compute time multiplier, >= 1
};

enum class LinkLevel : std::uint8_t { kNvlink, kNic, kSpine };

// One degraded link (both directions): a GPU's NVLink, or a node's NIC / spine port (one rail,
// or every rail of the node when nic is unset).
struct DegradedLink {
  std::string name{};  // default "degraded_links[i]"
  LinkLevel level = LinkLevel::kNic;
  std::optional<int> gpu{};     // kNvlink
  std::optional<int> node{};    // kNic, kSpine
  std::optional<int> nic{};     // kNic, kSpine; unset = every NIC of the node
  double bandwidth_fraction = 1;  // remaining bandwidth / healthy, in (0, 1]
};

struct PerturbationSpec {
  std::vector<SlowGpus> slow{};
  std::vector<DegradedLink> degraded_links{};

  [[nodiscard]] bool empty() const { return slow.empty() && degraded_links.empty(); }
  [[nodiscard]] std::size_t size() const { return slow.size() + degraded_links.size(); }
  // Perturbation i in order (slow first, then links): its display name.
  [[nodiscard]] std::string name(std::size_t i) const;
  // Only perturbation i (same order as name()).
  [[nodiscard]] PerturbationSpec only(std::size_t i) const;

  // Throws std::invalid_argument naming the field ("perturbations.slow[0].ranks: ...") when a
  // selector is missing or doubled, a rank / node / supernode / NIC is outside the cluster, or a
  // factor is out of range.
  void validate(const topology::TopologySpec& topology) const;
};

// The spec applied to one topology.
struct ResolvedPerturbations {
  std::vector<double> compute_factor{};  // by GPU: compute time multiplier (1 = healthy); empty = none
  std::vector<double> link_fraction{};   // by link index: capacity fraction (1 = healthy); empty = none
  std::vector<int> slow_gpus{};          // ascending: GPUs with a compute factor > 1
  std::vector<int> nvlink_gpus{};        // ascending: GPUs whose own NVLink is degraded
  std::vector<int> scaleout_gpus{};      // ascending: GPUs whose rail's NIC or spine port is degraded
  std::vector<int> affected_gpus{};      // ascending union of the three: whose timeline may differ

  [[nodiscard]] bool empty() const { return affected_gpus.empty(); }
  [[nodiscard]] double compute(int gpu) const {
    return compute_factor.empty() ? 1.0 : compute_factor[static_cast<std::size_t>(gpu)];
  }
  [[nodiscard]] double link(std::uint32_t index) const { return link_fraction.empty() ? 1.0 : link_fraction[index]; }
};

// Several slowdowns of one GPU multiply, as do several degradations of one link. A fraction of
// GPUs is round(fraction * gpus) (at least 1) distinct GPUs drawn by a splitmix64 stream from the
// seed, so the same scenario always slows the same GPUs on every platform.
ResolvedPerturbations resolve(const PerturbationSpec& spec, const topology::Topology& topology);

// The GPUs a fraction selector picks (ascending); exposed for tests.
std::vector<int> draw_gpus(double fraction, std::uint64_t seed, int gpus);

}  // namespace mofasim::perturb
