// The one place where the Scenario proto meets the sealed runtime structs of model/spec.h
// (style.md S7 "seal"): a validated, normalised proto in, plain SI structs out. Nothing downstream
// parses strings or reads proto fields for these sections.
#pragma once

#include "model/spec.h"
#include "topology/topology_spec.h"
#include "proto/scenario.pb.h"

namespace mofasim::scenario {

model::ModelSpec to_model_spec(const proto::Model& model);
model::HardwareSpec to_hardware_spec(const proto::Hardware& hardware);
model::ParallelSpec to_parallel_spec(const proto::Parallelism& parallelism);
model::FeatureSpec to_feature_spec(const proto::Optimizations& optimizations);

// The NCCL protocol constants of this hardware for the topology's collective model.
topology::CollectiveTuning to_collective_tuning(const model::HardwareSpec& hardware,
                                                topology::CollectiveModel model = topology::CollectiveTuning{}.model);
topology::CollectiveModel to_collective_model(proto::CollectiveModel model);

// Overlap interference (model/interference.h): every overlap's alpha is at least the hardware's
// interference factor (1 when features.overlap_interference is off), as the replay charges it.
void apply_overlap_interference(const proto::Optimizations& optimizations, const model::HardwareSpec& hardware,
                                model::FeatureSpec& features);

}  // namespace mofasim::scenario
