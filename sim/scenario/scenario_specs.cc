#include "sim/scenario/scenario_specs.h"

#include <filesystem>
#include <stdexcept>

#include "schedules/factory.h"
#include "topology/rank_order.h"
#include "sim/fault/failure_records.h"
#include "sim/scenario/to_spec.h"
#include "sim/scenario/node_hardware.h"
#include "sim/scenario/perturbations.h"
#include "sim/scenario/scenario_specs_fail_slow.h"
#include "sim/scenario/scenario_specs_checkpoint.h"

namespace mofasim::cli {
namespace {

topology::LinkSpec to_link(const proto::LinkClass& link) {
  return topology::LinkSpec{.bandwidth = link.bandwidth(), .latency = link.latency()};
}

model::RecoveryKind to_recovery_kind(proto::Distribution d) {
  switch (d) {
    case proto::EXPONENTIAL: return model::RecoveryKind::kExponential;
    case proto::LOGNORMAL: return model::RecoveryKind::kLognormal;
    case proto::EMPIRICAL: return model::RecoveryKind::kEmpirical;
    default: return model::RecoveryKind::kFixed;
  }
}

}  // namespace

topology::Placement scenario_placement(const scenario::LoadedScenario& loaded) {
  const model::ParallelSpec& par = loaded.parallel;
  return topology::Placement({.tp = par.tp, .cp = par.cp, .ep = par.ep, .dp = par.dp, .pp = par.pp,
                              .etp = loaded.model.is_moe() ? par.etp : 0},
                             topology::RankOrder::parse(loaded.proto.parallelism().rank_order()));
}

topology::TopologySpec to_topology_spec(const proto::Scenario& scenario) {
  const proto::Topology& t = scenario.topology();
  topology::TopologySpec spec{
      .gpus = t.gpus(),
      .gpus_per_node = t.gpus_per_node(),
      .nodes_per_supernode = t.nodes_per_supernode(),
      .intra_node = to_link(t.intra_node()),
      .inter_node = to_link(t.inter_node()),
      .inter_supernode = {},
      .nics_per_node = {},
      .oversubscription = t.oversubscription(),
      .bandwidth_decay = t.bandwidth_decay(),
      // mu_b (MoFa(18)) travels in FeatureSpec::bandwidth_scale; applying it here too would count it twice.
      .bandwidth_scale = 1.0,
  };
  spec.collectives = scenario::to_collective_tuning(scenario::to_hardware_spec(scenario.hardware()),
                                                    scenario::to_collective_model(t.collective_model()));
  if (t.has_inter_supernode()) spec.inter_supernode = to_link(t.inter_supernode());
  if (t.has_nics_per_node()) spec.nics_per_node = t.nics_per_node();
  return spec;
}

namespace {

// fault_tolerance.* without the checkpoint I/O model's times (to_fault_spec adds them).
model::FaultSpec fault_spec_without_io(const scenario::LoadedScenario& loaded) {
  const proto::Scenario& scenario = loaded.proto;
  if (!scenario.has_fault_tolerance()) {
    throw std::invalid_argument("fault_tolerance: the scenario has no fault_tolerance section");
  }
  const proto::FaultTolerance& ft = scenario.fault_tolerance();
  // The schema lets simulate and memory run without a checkpoint policy; the fault model needs one.
  if (!ft.has_checkpoint()) {
    throw std::invalid_argument(
        "fault_tolerance.checkpoint: required to model failures (interval_steps >= 1 and save_time)");
  }
  const int unit_gpus = ft.has_gpus_per_failure_unit() ? ft.gpus_per_failure_unit() : scenario.topology().gpus_per_node();
  model::FaultSpec spec;
  spec.node_failure_rate_per_day = ft.node_failure_rate_per_day();
  // Rounded up without adding unit_gpus - 1 first, which overflows int for units near 2^31.
  const int gpus = scenario.topology().gpus();
  spec.failure_units = unit_gpus > 0 ? gpus / unit_gpus + (gpus % unit_gpus != 0 ? 1 : 0) : 0;
  for (const proto::FailureClass& c : ft.failure_classes()) {
    spec.classes.push_back(model::FailureClass{
        .name = c.name(),
        .weight = c.weight(),
        .recovery = model::RecoveryDistribution{.kind = to_recovery_kind(c.distribution()),
                                                .mean_s = c.recovery(),
                                                .sigma = c.sigma(),
                                                .samples_s = {c.samples().begin(), c.samples().end()}},
    });
  }
  if (spec.classes.empty() && !ft.has_downtime_per_failure()) spec.classes = model::mofa_default_failure_classes();
  if (ft.has_downtime_per_failure()) spec.fixed_downtime_s = ft.downtime_per_failure();
  spec.checkpoint = model::CheckpointPolicy{
      .interval_steps = ft.checkpoint().interval_steps(),
      .save_time_s = ft.checkpoint().save_time(),
      .mode = ft.checkpoint().mode() == proto::ASYNC ? model::CheckpointMode::kAsync : model::CheckpointMode::kBlocking,
      .snapshot_time_s = ft.checkpoint().snapshot_time(),
  };
  spec.init_time_s = ft.init_time();
  spec.failures_during_save = ft.failures_during_save();
  spec.failures_during_recovery = ft.failures_during_recovery();
  switch (ft.process()) {
    case proto::WEIBULL:
      spec.process = model::FailureProcess{.kind = model::FailureProcessKind::kWeibull, .weibull_shape = ft.weibull_shape()};
      break;
    case proto::EMPIRICAL_PROCESS: {
      std::filesystem::path records_path = ft.failure_records();
      if (records_path.is_relative()) records_path = std::filesystem::path(loaded.path).parent_path() / records_path;
      try {  // named by the field, so check_scenario_specs locates it at its line
        const auto records = fault::load_failure_records(records_path.string());
        fault::apply_failure_history(spec, fault::fit_failure_history(records, spec.failure_units));
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("fault_tolerance.failure_records: ") + e.what());
      }
      break;
    }
    default: spec.process = model::FailureProcess{};
  }
  spec.fail_slow = to_fail_slow_spec(loaded);  // slow steps unpriced: price_fail_slow does that
  return spec;
}

}  // namespace

model::FaultSpec to_fault_spec(const scenario::LoadedScenario& loaded) {
  // With a storage tier the save, snapshot and restore times are simulated, not given.
  if (!loaded.proto.fault_tolerance().checkpoint().has_storage()) return fault_spec_without_io(loaded);
  return to_fault_spec(loaded, simulate_checkpoint(loaded));
}

model::FaultSpec to_fault_spec(const scenario::LoadedScenario& loaded, const CheckpointIoResult& io) {
  model::FaultSpec spec = fault_spec_without_io(loaded);
  apply_checkpoint_io(io, spec.checkpoint);
  return spec;
}


void check_scenario_specs(const scenario::LoadedScenario& loaded, bool with_faults) {
  auto locate = [&](const std::invalid_argument& e) {
    const std::string message = e.what();
    const auto end = message.find_first_of(": ");
    const std::string field = message.substr(0, end);
    const bool is_path = field.find('.') != std::string::npos;  // a field path: locate it (or its section)
    scenario::SourceLocation at = is_path ? loaded.sources.find(field) : scenario::SourceLocation{};
    // A field that is absent with no section of it written (a missing fault_tolerance) is placed
    // at the document's start, so the line still reads file:line:col like every other refusal.
    if (at.file.empty()) at.file = loaded.path;
    if (at.line == 0) at = scenario::SourceLocation{.file = at.file, .line = 1, .column = 1};
    return scenario::ScenarioError({scenario::format_location(at) + ": " + message});
  };
  try {
    to_topology_spec(loaded.proto).validate();
    if (with_faults) {
      // The idle-network I/O only: the drain's step replays wait for the command that uses them.
      model::FaultSpec spec = fault_spec_without_io(loaded);
      if (loaded.proto.fault_tolerance().checkpoint().has_storage()) {
        apply_checkpoint_io(fault::simulate_checkpoint_io(checkpoint_io_spec(loaded)), spec.checkpoint);
      }
      model::validate(spec);
      static_cast<void>(scenario::training_steps(loaded.proto));  // the fault model's run length
    }
  } catch (const std::invalid_argument& e) {
    throw locate(e);
  }
}

scenario::LoadedScenario load_checked(const std::string& path, const std::vector<std::string>& overrides,
                                      bool with_faults) {
  scenario::LoadedScenario loaded = scenario::load_scenario(path, overrides);
  check_scenario_specs(loaded, with_faults);
  return loaded;
}

executor::SimulationInput simulation_input(const scenario::LoadedScenario& loaded) {
  const topology::TopologySpec topo = to_topology_spec(loaded.proto);
  return executor::SimulationInput{.model = loaded.model,
                                   .hardware = loaded.hardware,
                                   .parallel = loaded.parallel,
                                   .features = loaded.features,
                                   .topology = topo,
                                   .rank_order = loaded.proto.parallelism().rank_order(),
                                   .perturbations = scenario::to_perturbation_spec(loaded.proto),
                                   .node_hardware = scenario::to_node_hardware(loaded.proto)};
}

void refuse_node_hardware(const scenario::LoadedScenario& loaded, const std::string& what) {
  if (loaded.proto.topology().node_hardware_size() == 0) return;
  const std::string field = "topology.node_hardware";
  scenario::SourceLocation at = loaded.sources.find(field);
  if (at.file.empty()) at.file = loaded.path;
  if (at.line == 0) at = scenario::SourceLocation{.file = at.file, .line = 1, .column = 1};
  throw scenario::ScenarioError({scenario::format_location(at) + ": " + field + ": " + what +
                                 " prices one GPU for every rank; heterogeneous GPUs are priced by the step "
                                 "simulation (mofasim simulate, ettr)"});
}

model::AnalyticInput analytic_input(const scenario::LoadedScenario& loaded) {
  refuse_node_hardware(loaded, "the analytic model");
  return model::AnalyticInput{.model = loaded.model,
                              .hardware = loaded.hardware,
                              .parallel = loaded.parallel,
                              .features = loaded.features,
                              .topology = to_topology_spec(loaded.proto),
                              .rank_order = topology::RankOrder::parse(loaded.proto.parallelism().rank_order())};
}

}  // namespace mofasim::cli
