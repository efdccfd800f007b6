// The one place where the Scenario proto meets the sealed runtime structs of model/spec.h
// (style.md S7 "seal"): a validated, normalised proto in, plain SI structs out. Nothing downstream
// parses strings or reads proto fields for these sections.
#pragma once

#include "model/spec.h"
#include "proto/scenario.pb.h"

namespace mofasim::scenario {

model::ModelSpec to_model_spec(const proto::Model& model);
model::HardwareSpec to_hardware_spec(const proto::Hardware& hardware);
model::ParallelSpec to_parallel_spec(const proto::Parallelism& parallelism);
model::FeatureSpec to_feature_spec(const proto::Optimizations& optimizations);

}  // namespace mofasim::scenario
