// The snake_case names of ops, collective kinds and layer groups that op and task names are built
// from ("tp_all_reduce"), declared in op_table.h.
#include "model/op_table.h"
#include "sim/units/check.h"

namespace mofasim::model {

const char* op_name(OpKind op) {
  switch (op) {
    case OpKind::kEmbedding: return "embedding";
    case OpKind::kInputNorm: return "input_norm";
    case OpKind::kQkvProjection: return "qkv_projection";
    case OpKind::kAttentionMap: return "attention_map";
    case OpKind::kSoftmax: return "softmax";
    case OpKind::kAttentionValue: return "attention_value";
    case OpKind::kOutputProjection: return "output_projection";
    case OpKind::kPostAttentionNorm: return "post_attention_norm";
    case OpKind::kRouter: return "router";
    case OpKind::kMlpLinear1: return "mlp_linear1";
    case OpKind::kMlpActivation: return "mlp_activation";
    case OpKind::kMlpLinear2: return "mlp_linear2";
    case OpKind::kSharedLinear1: return "shared_linear1";
    case OpKind::kSharedActivation: return "shared_activation";
    case OpKind::kSharedLinear2: return "shared_linear2";
    case OpKind::kExpertLinear1: return "expert_linear1";
    case OpKind::kExpertActivation: return "expert_activation";
    case OpKind::kExpertLinear2: return "expert_linear2";
    case OpKind::kExpertCombine: return "expert_combine";
    case OpKind::kMtpProjection: return "mtp_projection";
    case OpKind::kFinalNorm: return "final_norm";
    case OpKind::kHead: return "head";
    case OpKind::kLoss: return "loss";
    case OpKind::kRope: return "rope";
    case OpKind::kAttentionResidual: return "attention_residual";
    case OpKind::kMlpResidual: return "mlp_residual";
    case OpKind::kMoePermute: return "moe_permute";
    case OpKind::kQkNorm: return "qk_norm";
  }
  MOFASIM_UNREACHABLE("unknown OpKind");
}

const char* collective_name(CollectiveKind c) {
  switch (c) {
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kAllToAll: return "all_to_all";
    case CollectiveKind::kBroadcast: return "broadcast";
    case CollectiveKind::kSendRecv: return "send_recv";
    case CollectiveKind::kRingStep: return "ring_step";
    case CollectiveKind::kAllToAllScaleOut: return "all_to_all_scale_out";
    case CollectiveKind::kAllToAllScaleUp: return "all_to_all_scale_up";
  }
  MOFASIM_UNREACHABLE("unknown CollectiveKind");
}

const char* layer_group_name(LayerGroup g) {
  switch (g) {
    case LayerGroup::kTp: return "tp";
    case LayerGroup::kCp: return "cp";
    case LayerGroup::kEp: return "ep";
    case LayerGroup::kEtp: return "etp";
    case LayerGroup::kEtpEp: return "etp_ep";
    case LayerGroup::kPp: return "pp";
  }
  MOFASIM_UNREACHABLE("unknown LayerGroup");
}

}  // namespace mofasim::model
