// Training stacks of open-set rows: the per-source table and the text reader (measured_open_stack.h).
#include "sim/analysis/measured_open_stack.h"

#include <regex>

namespace mofasim::analysis {
namespace {

bool found(const std::string& text, const std::regex& pattern) { return std::regex_search(text, pattern); }

// A phrase that is stated but switched off in the same clause ("TP-comm overlap and P2P overlap
// disabled", "sequence_parallel=False"): the clause runs to the next ';' or ','.
bool negated_in_clause(const std::string& text, const std::regex& phrase) {
  static const std::regex kOff(R"((disabled|\boff\b|=\s?false|:\s?false|\bno\b|\bwithout\b|\bnot\b))", std::regex::icase);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), phrase); it != std::sregex_iterator(); ++it) {
    const auto begin = text.find_last_of(";,(", static_cast<std::size_t>(it->position()));
    const auto end = text.find_first_of(";,)", static_cast<std::size_t>(it->position()));
    const std::size_t from = begin == std::string::npos ? 0 : begin + 1;
    const std::string clause = text.substr(from, (end == std::string::npos ? text.size() : end) - from);
    if (!std::regex_search(clause, kOff)) return false;  // one clause states it on
  }
  return true;
}

// On or off where the text names the phrase, nothing where it does not.
std::optional<bool> stated(const std::string& text, const std::regex& phrase) {
  if (!found(text, phrase)) return std::nullopt;
  return !negated_in_clause(text, phrase);
}

}  // namespace

std::optional<OpenStack> known_source_stack(SourceFramework framework) {
  using F = SourceFramework;
  // SimuMax (O-SMXB/O-SMXA): Megatron-LM with sequence parallelism, TP-comm and P2P overlap off (README §3.1).
  // Both run Megatron-Core layers on Transformer Engine (TE 2.11 for O-SMXB, README §3.1): TE's
  // fused RoPE, residual adds and MoE permute are kernels of their step.
  if (framework == F::kSimuMaxMegatron) {
    return OpenStack{.sequence_parallel = true, .kernels = model::KernelStack::kTransformerEngine};
  }
  // InternEvo (O-ILM): its hybrid ZeRO overlaps the gradient reduce with the backward (configs/7B_sft.py
  // overlap_sync_grad); tensor parallelism without sequence parallelism. Assumption where unstated.
  // Its attention is flash-attn 1.0.5: InternLM doc/en/install.md ("Flash-Attention == v1.0.5",
  // InternLM/InternLM@0f5ee05), the stack of the July 2023 measurements (FlashAttention-2 was
  // released on 2023-07-17).
  // Its layer's kernels are the internlm set (model/spec.h KernelStack::kInternLm), read from the
  // code of the rows' config commit (configs/7B_sft.py @ 0047876; docs/validation-measured.md):
  // RoPE by flash-attn's rotary CUDA kernel, in place on q and k (internlm/model/embedding.py,
  // ApplyRotaryEmbQKV_: rotary_emb.apply_rotary), two eager residual adds per layer
  // (modeling_internlm.py, PackedFlashBaseLayer1D._forward: dropped2 + residual1, hidden_states +
  // residual2), each RMSNorm on an fp32 copy (norm1(residual1.float())) inside the default
  // dropout_selective_checkpoint, and w3(F.silu(w1(x)) * w2(x)) with separate w1 / w2 GEMMs.
  if (framework == F::kInternEvo) {
    return OpenStack{.dp_overlap = true, .kernels = model::KernelStack::kInternLm, .attention = model::AttentionImpl::kFlash1, .zero_broadcast = true};
  }
  // flash-attention GPT (O-FA): PyTorch Lightning DDP, which overlaps bucketed all-reduces with the backward; the
  // table is of November 2022, FlashAttention v1 (the rows' notes; FlashAttention-2 came in 2023).
  if (framework == F::kFlashAttentionGpt) return OpenStack{.dp_overlap = true, .attention = model::AttentionImpl::kFlash1};
  // NVIDIA recipes (O-MBR / O-MLP): Megatron-Core recipes with sequence parallelism and overlapped gradient reduce.
  // Both are NVIDIA's Megatron-Core + Transformer Engine recipes (NeMo / Megatron-Bridge containers).
  // MLPerf's submissions also overlap the TP collectives with the GEMMs ("TP-comm overlap" in every
  // O-MLP row's notes, TE userbuffers): a per-row fact, read from the notes (tp_comm_overlap_of).
  // Their interleaved schedules overlap the P2P sends and receives with the next chunk's compute
  // (Megatron's --overlap-p2p-communication, pp_overlap here; MoFa(23)): MLPerf's GPT-3 config
  // (training_results_v4.1 NVIDIA/benchmarks/gpt3/implementations/*/conf/custom.yaml:
  // overlap_p2p_comm ${OVERLAP_P2P_COMM,True}, batch_p2p_comm False, "valid only when
  // virtual_pipeline_model_parallel_size is larger than 1"), and NeMo 2's MegatronCommOverlapCallback
  // (_get_model_comm_overlap_cfgs: overlap_p2p_comm True, batch_p2p_comm False when pp > 1 and
  // vp > 1), which the Llama 3.1 405B submissions and Megatron-Bridge recipes run under.
  if (framework == F::kNvidiaMegatron) {
    return OpenStack{.sequence_parallel = true,
            .dp_overlap = true,
            .kernels = model::KernelStack::kTransformerEngine,
            .interleaved_p2p_overlap = true};
  }
  // AutoModel (O-AM): NeMo AutoModel's benchmarks run "kernels: TE + DeepEP" (every O-AM row's notes): TE's
  // kernels, and DeepEP's dispatch (one copy per destination node, forwarded over NVLink: flex).
  if (framework == F::kAutomodel) return OpenStack{.kernels = model::KernelStack::kTransformerEngine, .dispatcher = model::MoeDispatcher::kFlex};
  // Megatron-LLaMA (O-MLL; alibaba/Megatron-LLaMA, a Megatron-LM fork of mid-2023 without Transformer
  // Engine); overlap comes only with its OverlappedDistributedOptimizer (sharding_of). Read from its code:
  // - attention by flash-attn 1: transformer.py imports flash_attn_unpadded_func, FlashAttention-1's
  //   interface, and the README lists FlashAttention2 as future work;
  // - the layer's other kernels as eager PyTorch ops (kUnfused): transformer.py's SwiGLU is
  //   F.silu(x[0]) * x[1] on a torch.chunk, RoPE is rotary_pos_embedding.apply_rotary_pos_emb's
  //   rotate/multiply/add, and the vocab-parallel cross-entropy is Megatron-LM's eager one;
  // - sequence parallelism with tp > 1: the repository's example launch scripts pass
  //   --sequence-parallel (assumption: the rows' LLaMA_13_slurm.sh is not quoted by the set).
  if (framework == F::kMegatronLlama) {
    return OpenStack{.sequence_parallel = true, .kernels = model::KernelStack::kUnfused, .attention = model::AttentionImpl::kFlash1};
  }
  // torchtitan (O-TT): its tensor parallelism is sequence-parallel. apply_tp (torchtitan/models/llama3/
  // infra/parallelize.py, and torchtitan/parallelisms/parallelize_llama.py in the 2024 tree) shards the
  // norms with SequenceParallel(), gathers each block's input with PrepareModuleInput(Shard(1) ->
  // Replicate()) and reduce-scatters wo's and w2's outputs (RowwiseParallel(output_layouts=Shard(1))):
  // an all-gather and a reduce-scatter per block, not an all-reduce. Its kernels are PyTorch's, named
  // by no row, so the row's text keeps choosing them (KernelStack::kMofaTable2 when it names none).
  if (framework == F::kTorchtitan) return OpenStack{.sequence_parallel = true, .kernels_from_row = true};
  return std::nullopt;
}

// The phrases, each as the open set's rows write it (the row named is an example):
// - sequence parallelism: "sequence parallel" / "sequence_parallel" / "sequence-parallel", off when
//   its clause says so ("sequence_parallel=False (uncertain)", O-ILM-01; on in "sequence_parallel=True
//   (uncertain)", O-ILM-17, and "sequence parallel on when TP>1", O-SMXB);
// - Transformer Engine's kernels: "TE" as a word ("TE 2.11.0", "kernels: TE + DeepEP"),
//   "TransformerEngine" / "Transformer Engine", or a stack built on it (NeMo, Megatron-Core,
//   Megatron-Bridge);
// - the gradient reduce overlapped with the backward: "overlapped grad-reduce" (O-MLP-13), "overlap of
//   grad sync" (O-ILM-01), "overlap_grad_reduce", or PyTorch DDP, whose bucketed all-reduce overlaps
//   by construction ("plain DDP", O-FA-01);
// - the interleaved schedule's P2P overlap: "P2P overlap" / "overlap_p2p", off when its clause says
//   "disabled" ("TP-comm overlap and P2P overlap disabled", O-SMXB-01);
// - FlashAttention-1: "FlashAttention v1" (O-FA-01), "flash-attn 1.0.5", "FlashAttention-1"; attention
//   without a flash kernel: "unfused attention", "no flash attention", "without FlashAttention";
// - DeepEP: the flex dispatcher (one copy per destination node; "kernels: TE + DeepEP", O-AM-01).
// Every repeat in the patterns is bounded, so their cost stays linear in the text (at most
// kMaxOpenCellChars per column, measured_open_reader.h).
StatedStack stack_stated_in(const OpenRun& run) {
  const std::string text = run.notes + "; " + run.optimizer_sharding + "; " + run.precision;
  static const std::regex kSp(R"(sequence[ _-]parallel)", std::regex::icase);
  static const std::regex kTeWord(R"(\bTE\b)");
  static const std::regex kTeStack(R"(transformer ?engine|\bnemo\b|megatron[ -]core|\bmcore\b|megatron[ -]bridge)",
                                   std::regex::icase);
  static const std::regex kDpOverlap(
      R"(overlap(ped)?[ _-]{0,3}(of )?grad|grad(ient)?[ _-]{0,3}(reduce|sync|all-?reduce)[ _-]{0,3}overlap|\bddp\b)",
      std::regex::icase);
  static const std::regex kP2pOverlap(R"(p2p[ _-]{0,3}(comm[a-z]{0,11}[ _-]{0,3})?overlap|overlap[ _-]{0,3}p2p)", std::regex::icase);
  static const std::regex kFlash1(R"(flash[ _-]?att(n|ention)[ _-]{0,3}(v|==|version ?)?1(\.[0-9]{1,3}){0,3}(?![0-9]))",
                                  std::regex::icase);
  static const std::regex kUnfused(R"(unfused attention|non-flash attention|(no|without) flash[ _-]?att(n|ention))",
                                   std::regex::icase);
  static const std::regex kDeepEp(R"(deepep)", std::regex::icase);
  StatedStack s;
  s.sequence_parallel = stated(text, kSp);
  if (found(text, kTeWord) || found(text, kTeStack)) s.kernels = model::KernelStack::kTransformerEngine;
  s.dp_overlap = stated(text, kDpOverlap);
  s.interleaved_p2p_overlap = stated(text, kP2pOverlap);
  if (found(text, kUnfused)) {
    s.attention = model::AttentionImpl::kUnfused;
  } else if (found(text, kFlash1)) {
    s.attention = model::AttentionImpl::kFlash1;
  }
  if (found(text, kDeepEp)) s.dispatcher = model::MoeDispatcher::kFlex;
  return s;
}

OpenStack open_stack(const OpenRun& run) {
  const std::optional<OpenStack> known = known_source_stack(source_framework(run));
  OpenStack s = known.value_or(OpenStack{});
  const StatedStack row = stack_stated_in(run);
  s.sequence_parallel = row.sequence_parallel.value_or(s.sequence_parallel);
  s.dp_overlap = row.dp_overlap.value_or(s.dp_overlap);
  s.interleaved_p2p_overlap = row.interleaved_p2p_overlap.value_or(s.interleaved_p2p_overlap);
  s.attention = row.attention.value_or(s.attention);
  s.dispatcher = row.dispatcher.value_or(s.dispatcher);
  // A known source's kernel set is read from its code (InternLM's, Megatron-LLaMA's eager one), more
  // specific than a mention of TE in a row; the text names the set only for other sources and those
  // whose known stack leaves it to the row (torchtitan).
  if (!known || s.kernels_from_row) s.kernels = row.kernels.value_or(s.kernels);
  return s;
}

}  // namespace mofasim::analysis
