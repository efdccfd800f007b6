// Validation and resolution of perturbations onto a topology.
#include "sim/perturb/perturbation.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace mofasim::perturb {
namespace {

std::string slow_path(std::size_t i) { return "perturbations.slow[" + std::to_string(i) + "]"; }
std::string link_path(std::size_t i) { return "perturbations.degraded_links[" + std::to_string(i) + "]"; }

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw std::invalid_argument(path + ": " + message);
}

void check_ids(const std::vector<int>& ids, int count, const std::string& path, const std::string& what,
               bool indexed = true) {
  for (std::size_t k = 0; k < ids.size(); ++k) {
    if (ids[k] < 0 || ids[k] >= count) {
      fail(indexed ? path + "[" + std::to_string(k) + "]" : path,
           what + " " + std::to_string(ids[k]) + " is outside the cluster (0.." + std::to_string(count - 1) + ")");
    }
  }
}

std::string num(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int supernodes_of(const topology::TopologySpec& t) {
  const int nodes = std::max(1, t.nodes());
  return t.nodes_per_supernode > 0 ? nodes / t.nodes_per_supernode : 1;
}

}  // namespace

std::string PerturbationSpec::name(std::size_t i) const {
  if (i < slow.size()) return slow[i].name.empty() ? "slow[" + std::to_string(i) + "]" : slow[i].name;
  const std::size_t j = i - slow.size();
  return degraded_links[j].name.empty() ? "degraded_links[" + std::to_string(j) + "]" : degraded_links[j].name;
}

PerturbationSpec PerturbationSpec::only(std::size_t i) const {
  PerturbationSpec one;
  if (i < slow.size()) {
    one.slow.push_back(slow[i]);
    one.slow.back().name = name(i);
  } else {
    one.degraded_links.push_back(degraded_links[i - slow.size()]);
    one.degraded_links.back().name = name(i);
  }
  return one;
}

void PerturbationSpec::validate(const topology::TopologySpec& t) const {
  const int nodes = std::max(1, t.nodes());
  for (std::size_t i = 0; i < slow.size(); ++i) {
    const SlowGpus& s = slow[i];
    const std::string p = slow_path(i);
    const int selectors = (s.ranks.empty() ? 0 : 1) + (s.fraction ? 1 : 0) + (s.nodes.empty() ? 0 : 1) +
                          (s.supernodes.empty() ? 0 : 1);
    if (selectors != 1) {
      fail(p, selectors == 0 ? "give one of ranks, fraction, nodes or supernodes"
                             : "give only one of ranks, fraction, nodes or supernodes");
    }
    if (!(std::isfinite(s.slowdown) && s.slowdown >= 1)) {
      fail(p + ".slowdown", "must be >= 1 (compute time multiplier), got " + num(s.slowdown));
    }
    check_ids(s.ranks, t.gpus, p + ".ranks", "rank");
    check_ids(s.nodes, nodes, p + ".nodes", "node");
    check_ids(s.supernodes, supernodes_of(t), p + ".supernodes", "supernode");
    if (s.fraction && !(*s.fraction > 0 && *s.fraction <= 1)) {
      fail(p + ".fraction", "must be in (0, 1], got " + num(*s.fraction));
    }
  }
  for (std::size_t i = 0; i < degraded_links.size(); ++i) {
    const DegradedLink& d = degraded_links[i];
    const std::string p = link_path(i);
    if (!(d.bandwidth_fraction > 0 && d.bandwidth_fraction <= 1)) {
      fail(p + ".bandwidth_fraction", "must be in (0, 1], got " + num(d.bandwidth_fraction));
    }
    if (d.level == LinkLevel::kNvlink) {
      if (!d.gpu) fail(p + ".gpu", "missing (required by level nvlink)");
      check_ids({*d.gpu}, t.gpus, p + ".gpu", "GPU", false);
      if (d.node || d.nic) fail(p + (d.node ? ".node" : ".nic"), "only used with level nic or spine (nvlink takes gpu)");
      continue;
    }
    if (d.gpu) fail(p + ".gpu", "only used with level nvlink (nic and spine take node and nic)");
    if (!d.node) fail(p + ".node", "missing (required by level nic and spine)");
    if (t.nodes() < 2) fail(p + ".node", "the cluster has one node, so no scale-out link to degrade");
    check_ids({*d.node}, nodes, p + ".node", "node", false);
    if (d.nic && (*d.nic < 0 || *d.nic >= t.nics())) {
      fail(p + ".nic", "NIC " + std::to_string(*d.nic) + " is outside the node (0.." + std::to_string(t.nics() - 1) + ")");
    }
    if (d.level == LinkLevel::kSpine && supernodes_of(t) < 2) {
      fail(p + ".level", "spine needs more than one supernode (topology.nodes_per_supernode)");
    }
  }
}

std::vector<int> draw_gpus(double fraction, std::uint64_t seed, int gpus) {
  const int k = std::clamp(static_cast<int>(std::lround(fraction * gpus)), 1, gpus);
  // Partial Fisher-Yates with a platform-independent generator (std:: distributions are not).
  std::vector<int> ids(static_cast<std::size_t>(gpus));
  std::iota(ids.begin(), ids.end(), 0);
  std::uint64_t state = seed;
  for (int i = 0; i < k; ++i) {
    const auto span = static_cast<std::uint64_t>(gpus - i);
    const auto j = static_cast<std::size_t>(i) + static_cast<std::size_t>(splitmix64(state) % span);
    std::swap(ids[static_cast<std::size_t>(i)], ids[j]);
  }
  ids.resize(static_cast<std::size_t>(k));
  std::sort(ids.begin(), ids.end());
  return ids;
}

ResolvedPerturbations resolve(const PerturbationSpec& spec, const topology::Topology& topo) {
  ResolvedPerturbations r;
  if (spec.empty()) return r;
  const int gpus = topo.gpus();
  const int g_per_node = topo.gpus_per_node();
  std::vector<char> slow(static_cast<std::size_t>(gpus), 0);
  std::vector<char> nvlink(static_cast<std::size_t>(gpus), 0);
  std::vector<char> scaleout(static_cast<std::size_t>(gpus), 0);
  if (!spec.slow.empty()) r.compute_factor.assign(static_cast<std::size_t>(gpus), 1.0);
  for (const SlowGpus& s : spec.slow) {
    std::vector<int> chosen = s.ranks;
    if (s.fraction) chosen = draw_gpus(*s.fraction, s.seed, gpus);
    for (int n : s.nodes) {
      for (int i = 0; i < g_per_node; ++i) chosen.push_back(n * g_per_node + i);
    }
    for (int sn : s.supernodes) {
      const int first = sn * topo.nodes_per_supernode() * g_per_node;
      for (int i = 0; i < topo.nodes_per_supernode() * g_per_node; ++i) chosen.push_back(first + i);
    }
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    for (int g : chosen) {
      r.compute_factor[static_cast<std::size_t>(g)] *= s.slowdown;
      if (s.slowdown > 1) slow[static_cast<std::size_t>(g)] = 1;
    }
  }
  if (!spec.degraded_links.empty()) r.link_fraction.assign(topo.links().size(), 1.0);
  for (const DegradedLink& d : spec.degraded_links) {
    auto degrade = [&](topology::LinkId id) { r.link_fraction[topology::index_of(id)] *= d.bandwidth_fraction; };
    if (d.level == LinkLevel::kNvlink) {
      degrade(topo.nvlink_tx(*d.gpu));
      degrade(topo.nvlink_rx(*d.gpu));
      if (d.bandwidth_fraction < 1) nvlink[static_cast<std::size_t>(*d.gpu)] = 1;
      continue;
    }
    for (int rail = 0; rail < topo.nics_per_node(); ++rail) {
      if (d.nic && *d.nic != rail) continue;
      if (d.level == LinkLevel::kNic) {
        degrade(topo.nic_tx(*d.node, rail));
        degrade(topo.nic_rx(*d.node, rail));
      } else {
        degrade(topo.spine_up(*d.node, rail));
        degrade(topo.spine_down(*d.node, rail));
      }
      for (int i = 0; i < g_per_node; ++i) {
        const int gpu = *d.node * g_per_node + i;
        if (topo.rail_of(gpu) == rail && d.bandwidth_fraction < 1) scaleout[static_cast<std::size_t>(gpu)] = 1;
      }
    }
  }
  for (int g = 0; g < gpus; ++g) {
    const auto i = static_cast<std::size_t>(g);
    if (slow[i] != 0) r.slow_gpus.push_back(g);
    if (nvlink[i] != 0) r.nvlink_gpus.push_back(g);
    if (scaleout[i] != 0) r.scaleout_gpus.push_back(g);
    if (slow[i] != 0 || nvlink[i] != 0 || scaleout[i] != 0) r.affected_gpus.push_back(g);
  }
  return r;
}

}  // namespace mofasim::perturb
