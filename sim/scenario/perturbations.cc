// Conversion and load-time validation of the perturbations section.
#include "sim/scenario/perturbations.h"

#include <stdexcept>
#include <string>

namespace mofasim::scenario {

perturb::PerturbationSpec to_perturbation_spec(const proto::Scenario& scenario) {
  perturb::PerturbationSpec spec;
  if (!scenario.has_perturbations()) return spec;
  const proto::Perturbations& p = scenario.perturbations();
  for (int i = 0; i < p.slow_size(); ++i) {
    const proto::SlowGpus& s = p.slow(i);
    if (!s.has_slowdown()) {
      throw std::invalid_argument("perturbations.slow[" + std::to_string(i) + "].slowdown: missing (compute time multiplier >= 1)");
    }
    perturb::SlowGpus out{.name = s.name(),
                          .ranks = {s.ranks().begin(), s.ranks().end()},
                          .fraction = {},
                          .seed = static_cast<std::uint64_t>(s.seed()),
                          .nodes = {s.nodes().begin(), s.nodes().end()},
                          .supernodes = {s.supernodes().begin(), s.supernodes().end()},
                          .slowdown = s.slowdown()};
    if (s.has_fraction()) out.fraction = s.fraction();
    spec.slow.push_back(std::move(out));
  }
  for (int i = 0; i < p.degraded_links_size(); ++i) {
    const proto::DegradedLink& d = p.degraded_links(i);
    const std::string path = "perturbations.degraded_links[" + std::to_string(i) + "]";
    if (d.level() == proto::LINK_LEVEL_UNSPECIFIED) throw std::invalid_argument(path + ".level: missing (nvlink, nic or spine)");
    if (!d.has_bandwidth_fraction()) throw std::invalid_argument(path + ".bandwidth_fraction: missing (in (0, 1])");
    perturb::DegradedLink out{.name = d.name(),
                              .level = d.level() == proto::NVLINK ? perturb::LinkLevel::kNvlink
                                       : d.level() == proto::NIC  ? perturb::LinkLevel::kNic
                                                                  : perturb::LinkLevel::kSpine,
                              .gpu = {}, .node = {}, .nic = {},
                              .bandwidth_fraction = d.bandwidth_fraction()};
    if (d.has_gpu()) out.gpu = d.gpu();
    if (d.has_node()) out.node = d.node();
    if (d.has_nic()) out.nic = d.nic();
    spec.degraded_links.push_back(std::move(out));
  }
  return spec;
}

void check_perturbations(const proto::Scenario& scenario, const SourceMap& sources, Diagnostics& diagnostics) {
  if (!scenario.has_perturbations()) return;
  const proto::Topology& t = scenario.topology();
  const int gpus = t.gpus();
  const int per_node = t.gpus_per_node();
  if (gpus < 1 || per_node < 1 || (gpus > per_node && gpus % per_node != 0)) return;
  const int nodes = gpus > per_node ? gpus / per_node : 1;
  if (t.nodes_per_supernode() < 0 || (t.nodes_per_supernode() > 0 && nodes % t.nodes_per_supernode() != 0)) return;
  if (t.has_nics_per_node() && t.nics_per_node() < 1) return;
  topology::TopologySpec shape{.gpus = gpus, .gpus_per_node = per_node, .nodes_per_supernode = t.nodes_per_supernode()};
  if (t.has_nics_per_node()) shape.nics_per_node = t.nics_per_node();
  try {
    to_perturbation_spec(scenario).validate(shape);
  } catch (const std::invalid_argument& e) {
    diagnostics.error_at_path(sources, e.what());
  }
}

}  // namespace mofasim::scenario
