// Layout checks of the parallelism section (validate.h): the pipeline split, the folded expert
// layout and the rank order's names.
#include "sim/scenario/validate_layout.h"

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/scenario/validate_deepep.h"
#include "topology/placement.h"
#include "topology/rank_order.h"

namespace mofasim::scenario {

void check_stage_layers(const proto::Parallelism& x, std::int64_t layers, const FieldFail& fail) {
  const std::string p = "parallelism";
  const std::int64_t chunks = std::int64_t{x.pp()} * x.vpp();
  // Megatron's account_for_{embedding,loss}_in_pipeline_split: the even split counts them as layers.
  const std::int64_t counted = (x.account_for_embedding_in_pipeline_split() ? 1 : 0) +
                               (x.account_for_loss_in_pipeline_split() ? 1 : 0);
  if (counted > 0 && x.stage_layers_size() > 0) {
    fail(p + (x.account_for_embedding_in_pipeline_split() ? ".account_for_embedding_in_pipeline_split"
                                                           : ".account_for_loss_in_pipeline_split"),
         "only with the even split, not with stage_layers (Megatron refuses it with an uneven pipeline)");
    return;
  }
  if (x.stage_layers_size() == 0 && counted > 0) {
    if (layers >= 1 && (layers + counted) % chunks != 0) {
      fail(p + ".pp", "pp*vpp = " + num(chunks) + " does not divide model.num_layers + " + num(counted) +
                          " (the embedding and loss counted in the pipeline split) = " + num(layers + counted));
    }
    return;
  }
  if (x.stage_layers_size() == 0) {
    if (layers >= 1 && layers % chunks != 0) {
      fail(p + ".pp", "pp*vpp = " + num(std::int64_t{x.pp()}) + "*" + num(std::int64_t{x.vpp()}) + " = " + num(chunks) +
                          " does not divide model.num_layers = " + num(layers) + "; give stage_layers for an uneven split");
    }
    return;
  }
  if (x.stage_layers_size() != chunks) {
    fail(p + ".stage_layers", "has " + num(std::int64_t{x.stage_layers_size()}) + " entries but pp*vpp = " + num(chunks));
  }
  // An entry may be 0 (negative counts are refused with every int field): a virtual stage holding
  // only the embedding, or only the MTP modules and the head (Megatron's pipeline layouts write such
  // a stage "E" or "mL": DeepSeek-V3's "Et|(tt|)*30mL").
  std::int64_t sum = 0;
  for (int i = 0; i < x.stage_layers_size(); ++i) sum += x.stage_layers(i);
  if (layers >= 1 && sum != layers) {
    fail(p + ".stage_layers", "entries sum to " + num(sum) + " but model.num_layers = " + num(layers));
  }
}

// MoE parallel folding (placement.h): the expert dims etp*ep*edp fold over the tp*cp*dp ranks.
void check_expert_layout(const proto::Scenario& s, const proto::Parallelism& x, const proto::MoeConfig& moe,
                         const FieldFail& fail) {
  const std::string p = "parallelism";
  const std::int64_t tp = x.tp(), cp = x.cp(), dp = x.dp(), ep = x.ep(), etp = x.etp();
  if ((tp * cp * dp) % (etp * ep) != 0) {
    fail(p + ".ep", "ep*etp = " + num(ep) + "*" + num(etp) + " = " + num(ep * etp) +
                        " does not divide the folded group tp*cp*dp = " + num(tp * cp * dp));
    return;
  }
  check_deepep_group(s, x, moe, fail);  // validate_deepep.h
  // Megatron (parallel_state.initialize_model_parallel) takes any etp whose etp*ep*pp divides the
  // world, above or below tp; the grouped expert MLP then splits each expert's FFN width over the
  // etp ranks (megatron.core.utils.divide asserts it divides).
  if (moe.expert_ffn_hidden_size() >= 1 && moe.expert_ffn_hidden_size() % etp != 0) {
    fail(p + ".etp", num(etp) + " does not divide model.moe.expert_ffn_hidden_size = " +
                         num(std::int64_t{moe.expert_ffn_hidden_size()}) + " (each expert's FFN is split over etp ranks)");
  }
  topology::RankOrder order;
  try {
    order = topology::RankOrder::parse(x.rank_order());
  } catch (const std::invalid_argument&) {
    return;  // check_rank_order reported it
  }
  const topology::ParallelSizes sizes{.tp = x.tp(), .cp = x.cp(), .ep = x.ep(), .dp = x.dp(), .pp = x.pp(), .etp = x.etp()};
  // Node-limited routing can only bound the nodes a token reaches by at most the nodes there are.
  if (moe.router_group_topk() > 0 && s.has_topology() && s.topology().gpus_per_node() >= 1) {
    std::vector<int> members;
    try {
      members = topology::group_members_of(sizes, order, topology::GroupKind::kEp, 0);
    } catch (const std::invalid_argument&) {
      return;  // a layout the rank order refuses: check_rank_order reported it under parallelism.rank_order
    }
    std::set<int> nodes;
    for (int g : members) nodes.insert(g / s.topology().gpus_per_node());
    if (moe.router_group_topk() > static_cast<int>(nodes.size())) {
      fail("model.moe.router_group_topk", num(std::int64_t{moe.router_group_topk()}) +
                                              " exceeds the nodes one EP group spans (" + num(static_cast<std::int64_t>(nodes.size())) +
                                              " with ep = " + num(ep) + " and topology.gpus_per_node = " +
                                              num(std::int64_t{s.topology().gpus_per_node()}) + ")");
    }
  }
}

bool check_rank_order_names(const std::string& order, const FieldFail& fail) {
  try {  // Megatron's RankGenerator rules on the names (topology/rank_order.h); sizes come later
    (void)topology::RankOrder::parse(order);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    const std::string prefix = "parallelism.rank_order: ";
    fail("parallelism.rank_order", what.starts_with(prefix) ? what.substr(prefix.size()) : what);
    return false;
  }
  return true;
}

}  // namespace mofasim::scenario
