// Validation of TopologySpec: every rule a user can break, each with a one-line message that names
// the field and what is allowed.
#include "topology/topology_spec.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace mofasim::topology {
namespace {

[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw std::invalid_argument("topology." + field + ": " + what);
}

std::string num(double v) {
  std::string s = std::to_string(v);
  // Trim trailing zeros of std::to_string's fixed format for readable messages.
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s;
}

void check_link(const std::string& name, const LinkSpec& link) {
  if (!std::isfinite(link.bandwidth) || link.bandwidth <= 0) {
    fail(name + ".bandwidth", "must be a finite bandwidth > 0 bytes/s, got " + num(link.bandwidth));
  }
  if (!std::isfinite(link.latency) || link.latency < 0) {
    fail(name + ".latency", "must be a finite latency >= 0 s, got " + num(link.latency));
  }
}

}  // namespace

void TopologySpec::validate() const {
  if (gpus < 1) fail("gpus", "must be >= 1, got " + std::to_string(gpus));
  if (gpus_per_node < 1) fail("gpus_per_node", "must be >= 1, got " + std::to_string(gpus_per_node));
  if (gpus % gpus_per_node != 0) {
    fail("gpus", "must be a multiple of gpus_per_node (" + std::to_string(gpus_per_node) + "), got " +
                     std::to_string(gpus));
  }
  if (nodes_per_supernode < 0) {
    fail("nodes_per_supernode", "must be >= 0 (0 = one supernode), got " + std::to_string(nodes_per_supernode));
  }
  if (nodes_per_supernode > 0 && nodes() % nodes_per_supernode != 0) {
    fail("nodes_per_supernode", "must divide the node count (" + std::to_string(nodes()) + "), got " +
                                    std::to_string(nodes_per_supernode));
  }
  if (gpus_per_node > 1) check_link("intra_node", intra_node);
  if (nodes() > 1) check_link("inter_node", inter_node);
  if (inter_supernode) check_link("inter_supernode", *inter_supernode);
  if (nics_per_node) {
    const int k = *nics_per_node;
    if (k < 1 || k > gpus_per_node || gpus_per_node % k != 0) {
      fail("nics_per_node", "must divide gpus_per_node (" + std::to_string(gpus_per_node) + "), got " +
                                std::to_string(k));
    }
  }
  if (!std::isfinite(oversubscription) || oversubscription < 1) {
    fail("oversubscription", "must be a finite ratio >= 1, got " + num(oversubscription));
  }
  if (!std::isfinite(bandwidth_decay) || bandwidth_decay <= 0 || bandwidth_decay > 1) {
    fail("bandwidth_decay", "must be in (0, 1], got " + num(bandwidth_decay));
  }
  if (!std::isfinite(bandwidth_scale) || bandwidth_scale <= 0) {
    fail("bandwidth_scale", "must be a finite factor > 0, got " + num(bandwidth_scale));
  }
  const CollectiveTuning& c = collectives;
  if (!std::isfinite(c.ll_max_bandwidth) || c.ll_max_bandwidth <= 0) {
    fail("collectives.ll_max_bandwidth", "must be a finite bandwidth > 0 bytes/s, got " + num(c.ll_max_bandwidth));
  }
  if (!std::isfinite(c.nvls_efficiency) || c.nvls_efficiency <= 0 || c.nvls_efficiency > 1) {
    fail("collectives.nvls_efficiency", "must be in (0, 1], got " + num(c.nvls_efficiency));
  }
  if (c.nvls_channels < 2) {
    fail("collectives.nvls_channels", "must be >= 2, got " + std::to_string(c.nvls_channels));
  }
}

}  // namespace mofasim::topology
