// Derived defaults (see normalize.h).
#include "sim/scenario/normalize.h"

namespace mofasim::scenario {
namespace {

void normalize_model(proto::Model& m) {
  if (!m.has_num_kv_heads()) m.set_num_kv_heads(m.num_attention_heads());
  if (!m.has_head_dim() && m.num_attention_heads() > 0) m.set_head_dim(m.hidden_size() / m.num_attention_heads());
  if (!m.has_attention()) {
    if (m.has_mla()) {
      m.set_attention(proto::MLA);
    } else if (m.num_kv_heads() == m.num_attention_heads()) {
      m.set_attention(proto::MHA);
    } else if (m.num_kv_heads() == 1) {
      m.set_attention(proto::MQA);
    } else {
      m.set_attention(proto::GQA);
    }
  }
  if (m.has_moe() && !m.moe().has_shared_expert_ffn_hidden_size()) {
    m.mutable_moe()->set_shared_expert_ffn_hidden_size(m.moe().expert_ffn_hidden_size());
  }
}

// MoFa §3.4's failure mix: process restarts, pod replacements and job restarts in the ratio 3:6:1.
void add_default_failure_classes(proto::FaultTolerance& f) {
  struct Default {
    const char* name;
    double weight;
    double recovery_seconds;
  };
  constexpr Default kDefaults[] = {{"process", 3, 141}, {"pod", 6, 262}, {"job", 1, 307}};
  for (const auto& d : kDefaults) {
    proto::FailureClass* c = f.add_failure_classes();
    c->set_name(d.name);
    c->set_weight(d.weight);
    c->set_recovery(d.recovery_seconds);
  }
}

}  // namespace

void normalize_scenario(proto::Scenario& scenario) {
  if (scenario.has_model()) normalize_model(*scenario.mutable_model());
  if (scenario.has_topology()) {
    proto::Topology& t = *scenario.mutable_topology();
    if (!t.has_nics_per_node()) t.set_nics_per_node(t.gpus_per_node());
    if (!t.has_inter_supernode() && t.has_inter_node()) *t.mutable_inter_supernode() = t.inter_node();
  }
  if (scenario.has_fault_tolerance()) {
    proto::FaultTolerance& f = *scenario.mutable_fault_tolerance();
    if (!f.has_gpus_per_failure_unit()) f.set_gpus_per_failure_unit(scenario.topology().gpus_per_node());
    if (f.failure_classes_size() == 0) add_default_failure_classes(f);
  }
}

}  // namespace mofasim::scenario
