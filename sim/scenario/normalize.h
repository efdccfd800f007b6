// Derived defaults, filled into a validated Scenario so that every consumer reads the same values
// (and `--json` shows them). Runs after validate_scenario, so it may rely on every rule there.
// Fields filled, each only when absent:
//   model.num_kv_heads                   = num_attention_heads
//   model.head_dim                       = hidden_size / num_attention_heads
//   model.attention                      = mla if mla is given; else mha (g = a), mqa (g = 1), gqa
//   model.moe.shared_expert_ffn_hidden_size = moe.expert_ffn_hidden_size
//   topology.nics_per_node               = gpus_per_node
//   topology.inter_supernode             = inter_node
//   fault_tolerance.gpus_per_failure_unit = topology.gpus_per_node
//   fault_tolerance.failure_classes      = process 3 x 141 s, pod 6 x 262 s, job 1 x 307 s (MoFa §3.4)
#pragma once

#include "proto/scenario.pb.h"

namespace mofasim::scenario {

void normalize_scenario(proto::Scenario& scenario);

}  // namespace mofasim::scenario
