// The layers per pipeline chunk that an open-set source's framework uses when pp*vpp does not
// divide the layer count, written as parallel.stage_layers (pp*vpp entries in Megatron's chunk
// order: chunk j runs on pipeline rank j % pp). Two frameworks' rules, each from its own code:
//
//  - Megatron-Core with account_for_embedding_in_pipeline_split and
//    account_for_loss_in_pipeline_split (megatron/core/transformer/transformer_block.py): the
//    embedding and the loss each count as one layer, so L + 2 layers split evenly over the chunks
//    and the first and last chunk hold one transformer layer fewer. The MLPerf Training v5.0
//    llama31_405b submissions set both (ASYM_PP_EMBED=True, ASYM_PP_LOSS=True in
//    config_DGXH100_64x8x288xtp8pp8cp2.sh and config_GB200_384x4x48xtp4pp8cp2.sh).
//  - NeMo AutoModel's pipeline split (nemo_automodel/components/distributed/pipelining/
//    functional.py, generate_hf_model_fqn_per_model_part): L / chunks layers each, and the first
//    L % chunks stages one more; embedding and head are not counted. Its stages run on rank
//    stage % pp ("loop" style), Megatron's interleaved order.
//
// Schema-level accounting of the embedding and loss (account_for_embedding / _loss fields) is a
// separate feature; here only the resulting layer counts are written.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mofasim::analysis {

// Megatron's split with the embedding and the loss counted as layers, or nothing when L + 2 is not
// a multiple of `chunks` (Megatron refuses that layout) or a chunk would be left empty.
std::optional<std::vector<int>> megatron_embedding_loss_split(int layers, int chunks);

// NeMo AutoModel's split: the first layers % chunks stages get one layer more. Nothing when
// chunks > layers (AutoModel refuses that).
std::optional<std::vector<int>> automodel_split(int layers, int chunks);

// The split the row's source uses for an uneven layout, by source group (O-MLP: Megatron with
// embedding and loss counted; O-AM: AutoModel), or nothing when the source's rule is not known.
std::optional<std::vector<int>> open_source_stage_layers(const std::string& source_group, int layers, int chunks);

}  // namespace mofasim::analysis
