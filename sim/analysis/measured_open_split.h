// The split a row's framework (measured_open_framework.h) uses when pp*vpp does not divide the layer count. Two
// frameworks' rules, each from its own code:
//
//  - Megatron-Core with account_for_embedding_in_pipeline_split and
//    account_for_loss_in_pipeline_split (megatron/core/transformer/transformer_block.py): the
//    embedding and the loss each count as one layer, so L + 2 layers split evenly over the chunks
//    and the first and last chunk hold one transformer layer fewer. The MLPerf Training v5.0
//    llama31_405b submissions set both (ASYM_PP_EMBED=True, ASYM_PP_LOSS=True in
//    config_DGXH100_64x8x288xtp8pp8cp2.sh and config_GB200_384x4x48xtp4pp8cp2.sh); they are the
//    open set's only O-MLP rows with an uneven layout. Megatron-Bridge's library recipes of the
//    models its performance tables run unevenly set both as well (Llama 3.1 405B, Qwen3-235B-A22B);
//    DeepSeek-V3's recipes give a per-system pipeline layout instead, which a row does not state,
//    so such a row stays listed. The row sets the schema's two flags
//    (ParallelSpec::account_for_embedding / account_for_loss) and model::chunk_layers splits.
//  - NeMo AutoModel's pipeline split (nemo_automodel/components/distributed/pipelining/
//    functional.py, generate_hf_model_fqn_per_model_part): L / chunks layers each, and the first
//    L % chunks stages one more; embedding and head are not counted. Its stages run on rank
//    stage % pp ("loop" style), Megatron's interleaved order. Written as parallel.stage_layers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/spec.h"
#include "sim/analysis/measured_open_framework.h"
#include "sim/analysis/step_prediction.h"

namespace mofasim::analysis {

// NeMo AutoModel's split: the first layers % chunks stages get one layer more. Nothing when
// chunks > layers (AutoModel refuses that).
std::optional<std::vector<int>> automodel_split(int layers, int chunks);

// Writes into `parallel` the split the row's framework uses for an uneven layout (NVIDIA's
// Megatron-Core recipes: Megatron's account_for_* flags; AutoModel: its stage_layers). False, and `parallel`
// untouched, when the source's rule is not known. Whether the layers then split is
// model::chunk_layers' to say.
bool apply_open_source_split(SourceFramework framework, int layers, model::ParallelSpec& parallel);

// NeMo AutoModel with pipeline parallelism runs one pipeline schedule per local batch: its training
// step (recipes/llm/train_ft.py, _forward_backward_step) calls schedule.step() once for each of the
// GA = global_batch / (dp * local batch) local batches, and the schedule splits that local batch
// into local_batch / pp_microbatch_size micro-batches (pipelining/functional.py,
// build_pipeline_schedule: n_microbatches = local_batch_size // microbatch_size). Each step() fills
// and drains the pipeline, and PyTorch's stage reduces the FSDP gradients at the end of it
// (torch/distributed/pipelining/stage.py, _post_backward after the schedule's last backward). So a
// GA > 1 row is GA pipeline flushes of global_batch / GA sequences before one optimizer step, not
// one flush of the whole global batch. The row's notes give the local batch ("local batch 8, GA 2").
// Returns GA, or nothing when the notes give no local batch or dp * local batch does not divide
// the global batch.
std::optional<int> automodel_pipeline_flushes(const std::string& notes, int global_batch, int dp);

// The step of `flushes` pipeline flushes followed by one optimizer step, from the prediction `one`
// of a single flush (its global batch = the row's / flushes) with its optimizer step:
// flushes * (one - optimizer) + optimizer, every other breakdown category times `flushes`. Without
// a breakdown the optimizer is not known and the whole step repeats. flushes = 1 returns `one`.
StepPrediction repeat_pipeline_flushes(const StepPrediction& one, int flushes);

}  // namespace mofasim::analysis
