#include "sim/interop/megatron_flags.h"

#include <array>

#include "sim/interop/megatron_script.h"

namespace mofasim::interop {
namespace {

constexpr FlagUse U = FlagUse::kUsed;
constexpr FlagUse I = FlagUse::kIgnored;
constexpr FlagUse X = FlagUse::kUnsupported;
constexpr int V = kVariadic;

constexpr std::string_view kOptimizerMath = "optimizer hyper-parameter: no effect on step time";
constexpr std::string_view kSchedule = "learning-rate schedule: no effect on step time";
constexpr std::string_view kData = "data / tokenizer files: no effect on step time";
constexpr std::string_view kLogging = "logging, evaluation or checkpoint I/O outside the step";
constexpr std::string_view kNumerics = "numerics only: same kernels, same step time";
constexpr std::string_view kLauncher = "launcher address / rank: no effect on the step";

constexpr std::array kFlags = {
    // model shape
    MegatronFlag{"--num-layers", 1, U, ""}, MegatronFlag{"--hidden-size", 1, U, ""},
    MegatronFlag{"--ffn-hidden-size", 1, U, ""}, MegatronFlag{"--num-attention-heads", 1, U, ""},
    MegatronFlag{"--num-query-groups", 1, U, ""}, MegatronFlag{"--group-query-attention", 0, U, ""},
    MegatronFlag{"--kv-channels", 1, U, ""}, MegatronFlag{"--seq-length", 1, U, ""},
    MegatronFlag{"--max-position-embeddings", 1, U, ""}, MegatronFlag{"--vocab-size", 1, U, ""},
    MegatronFlag{"--tokenizer-type", 1, U, ""}, MegatronFlag{"--tokenizer-model", 1, U, ""},
    MegatronFlag{"--make-vocab-size-divisible-by", 1, U, ""}, MegatronFlag{"--swiglu", 0, U, ""},
    MegatronFlag{"--normalization", 1, U, ""}, MegatronFlag{"--untie-embeddings-and-output-weights", 0, U, ""},
    MegatronFlag{"--position-embedding-type", 1, U, ""}, MegatronFlag{"--use-rotary-position-embeddings", 0, U, ""},
    MegatronFlag{"--disable-bias-linear", 0, U, ""}, MegatronFlag{"--attention-backend", 1, U, ""},
    MegatronFlag{"--use-flash-attn", 0, U, ""}, MegatronFlag{"--attention-dropout", 1, U, ""},
    MegatronFlag{"--multi-latent-attention", 0, U, ""}, MegatronFlag{"--q-lora-rank", 1, U, ""},
    MegatronFlag{"--kv-lora-rank", 1, U, ""}, MegatronFlag{"--qk-head-dim", 1, U, ""},
    MegatronFlag{"--qk-pos-emb-head-dim", 1, U, ""}, MegatronFlag{"--v-head-dim", 1, U, ""},
    MegatronFlag{"--mtp-num-layers", 1, U, ""},
    // parallelism and batch
    MegatronFlag{"--tensor-model-parallel-size", 1, U, ""}, MegatronFlag{"--pipeline-model-parallel-size", 1, U, ""},
    MegatronFlag{"--context-parallel-size", 1, U, ""}, MegatronFlag{"--expert-model-parallel-size", 1, U, ""},
    MegatronFlag{"--expert-tensor-parallel-size", 1, U, ""},
    MegatronFlag{"--num-layers-per-virtual-pipeline-stage", 1, U, ""},
    MegatronFlag{"--num-virtual-stages-per-pipeline-rank", 1, U, ""}, MegatronFlag{"--sequence-parallel", 0, U, ""},
    MegatronFlag{"--micro-batch-size", 1, U, ""}, MegatronFlag{"--global-batch-size", 1, U, ""},
    MegatronFlag{"--train-iters", 1, U, ""}, MegatronFlag{"--train-samples", 1, U, ""},
    // recompute, precision, optimizer, overlaps
    MegatronFlag{"--recompute-granularity", 1, U, ""}, MegatronFlag{"--recompute-method", 1, U, ""},
    MegatronFlag{"--recompute-num-layers", 1, U, ""}, MegatronFlag{"--recompute-modules", V, U, ""},
    MegatronFlag{"--recompute-activations", 0, U, ""}, MegatronFlag{"--bf16", 0, U, ""},
    MegatronFlag{"--fp16", 0, U, ""}, MegatronFlag{"--fp8-format", 1, U, ""},
    MegatronFlag{"--use-distributed-optimizer", 0, U, ""}, MegatronFlag{"--optimizer-cpu-offload", 0, U, ""},
    MegatronFlag{"--overlap-grad-reduce", 0, U, ""}, MegatronFlag{"--overlap-param-gather", 0, U, ""},
    MegatronFlag{"--tp-comm-overlap", 0, U, ""},
    // MoE
    MegatronFlag{"--num-experts", 1, U, ""}, MegatronFlag{"--moe-router-topk", 1, U, ""},
    MegatronFlag{"--moe-ffn-hidden-size", 1, U, ""}, MegatronFlag{"--moe-shared-expert-intermediate-size", 1, U, ""},
    MegatronFlag{"--moe-layer-freq", 1, U, ""}, MegatronFlag{"--moe-token-dispatcher-type", 1, U, ""},
    // layout, precision, optimizer and overlap fields (megatron_import_layout.cc, megatron_import_features.cc)
    MegatronFlag{"--use-tp-pp-dp-mapping", 0, U, ""}, MegatronFlag{"--cp-comm-type", V, U, ""},
    MegatronFlag{"--account-for-embedding-in-pipeline-split", 0, U, ""},
    MegatronFlag{"--account-for-loss-in-pipeline-split", 0, U, ""},
    MegatronFlag{"--decoder-first-pipeline-num-layers", 1, U, ""}, MegatronFlag{"--decoder-last-pipeline-num-layers", 1, U, ""},
    MegatronFlag{"--window-size", 1, U, ""}, MegatronFlag{"--window-attn-skip-freq", 1, U, ""},
    MegatronFlag{"--fp8-recipe", 1, U, ""}, MegatronFlag{"--no-fp8-wgrad", 0, U, ""},
    MegatronFlag{"--grad-reduce-in-bf16", 0, U, ""}, MegatronFlag{"--main-grads-dtype", 1, U, ""},
    MegatronFlag{"--main-params-dtype", 1, U, ""}, MegatronFlag{"--exp-avg-dtype", 1, U, ""},
    MegatronFlag{"--exp-avg-sq-dtype", 1, U, ""}, MegatronFlag{"--data-parallel-sharding-strategy", 1, U, ""},
    MegatronFlag{"--use-torch-fsdp2", 0, U, ""}, MegatronFlag{"--num-distributed-optimizer-instances", 1, U, ""},
    MegatronFlag{"--optimizer-offload-fraction", 1, U, ""}, MegatronFlag{"--no-overlap-p2p-communication", 0, U, ""},
    MegatronFlag{"--use-precision-aware-optimizer", 0, I, "switch for --main-grads-dtype and the other dtype flags, which set the dtypes"},
    MegatronFlag{"--use-megatron-fsdp", 0, I, "implementation of --data-parallel-sharding-strategy, which sets the sharding"},
    // torchrun
    MegatronFlag{"--nproc_per_node", 1, U, ""}, MegatronFlag{"--nnodes", 1, U, ""},
    MegatronFlag{"--node_rank", 1, I, kLauncher}, MegatronFlag{"--master_addr", 1, I, kLauncher},
    MegatronFlag{"--master_port", 1, I, kLauncher}, MegatronFlag{"--rdzv_id", 1, I, kLauncher},
    MegatronFlag{"--rdzv_backend", 1, I, kLauncher}, MegatronFlag{"--rdzv_endpoint", 1, I, kLauncher},
    // changes the step, not expressible yet
    MegatronFlag{"--fp8-param-gather", 0, X, "FP8 parameter all-gather: the DP gather is priced in the parameter dtype's bytes"},
    MegatronFlag{"--moe-grouped-gemm", 0, X, "grouped expert GEMMs: expert efficiency is hardware.efficiency.small_gemm"},
    MegatronFlag{"--rampup-batch-size", 3, X, "batch ramp-up: the step is simulated at --global-batch-size"},
    MegatronFlag{"--rotary-percent", 1, X, "partial rotary embedding is not modelled"},
    MegatronFlag{"--cpu-offloading", 0, X, "activation offload: set optimizations.activation_offload by hand"},
    MegatronFlag{"--tp-comm-overlap-cfg", 1, X, "per-GEMM TP overlap settings: one tp_overlap for all"},
    MegatronFlag{"--defer-embedding-wgrad-compute", 0, X, "deferred embedding weight gradient is not modelled"},
    MegatronFlag{"--overlap-moe-expert-parallel-comm", 0, X,
                 "Megatron's combined-1F1B EP overlap (one extra warm-up forward) is no schedule of mofasim's; "
                 "ep_overlap pairs only the F&B pairs DualPipe marks"},
    MegatronFlag{"--delay-wgrad-compute", 0, X, "weight gradients deferred for EP overlap are not modelled"},
    MegatronFlag{"--first-last-layers-bf16", 0, X, "precision fp8 runs every layer's linear GEMMs in FP8; BF16 first / last layers are not a field"},
    MegatronFlag{"--num-layers-at-start-in-bf16", 1, X, "with --first-last-layers-bf16, not a field"},
    MegatronFlag{"--num-layers-at-end-in-bf16", 1, X, "with --first-last-layers-bf16, not a field"},
    MegatronFlag{"--hierarchical-context-parallel-sizes", V, X, "hierarchical CP (a2a+p2p) is not modelled"},
    MegatronFlag{"--moe-expert-capacity-factor", 1, U, ""}, MegatronFlag{"--moe-pad-expert-input-to-capacity", 0, U, ""},
    MegatronFlag{"--moe-router-num-groups", 1, U, ""}, MegatronFlag{"--moe-router-group-topk", 1, U, ""},
    // no effect on the step
    MegatronFlag{"--lr", 1, I, kSchedule}, MegatronFlag{"--min-lr", 1, I, kSchedule},
    MegatronFlag{"--lr-decay-style", 1, I, kSchedule}, MegatronFlag{"--lr-decay-iters", 1, I, kSchedule},
    MegatronFlag{"--lr-decay-samples", 1, I, kSchedule}, MegatronFlag{"--lr-warmup-fraction", 1, I, kSchedule},
    MegatronFlag{"--lr-warmup-iters", 1, I, kSchedule}, MegatronFlag{"--lr-warmup-samples", 1, I, kSchedule},
    MegatronFlag{"--decoupled-lr", 1, I, kSchedule}, MegatronFlag{"--decoupled-min-lr", 1, I, kSchedule},
    MegatronFlag{"--weight-decay", 1, I, kOptimizerMath}, MegatronFlag{"--clip-grad", 1, I, kOptimizerMath},
    MegatronFlag{"--adam-beta1", 1, I, kOptimizerMath}, MegatronFlag{"--adam-beta2", 1, I, kOptimizerMath},
    MegatronFlag{"--adam-eps", 1, I, kOptimizerMath}, MegatronFlag{"--init-method-std", 1, I, kOptimizerMath},
    MegatronFlag{"--seed", 1, I, kOptimizerMath}, MegatronFlag{"--hidden-dropout", 1, I, kNumerics},
    MegatronFlag{"--norm-epsilon", 1, I, kNumerics}, MegatronFlag{"--rotary-base", 1, I, kNumerics},
    MegatronFlag{"--apply-layernorm-1p", 0, I, kNumerics}, MegatronFlag{"--no-masked-softmax-fusion", 0, I, kNumerics},
    MegatronFlag{"--attention-softmax-in-fp32", 0, I, kNumerics}, MegatronFlag{"--qk-layernorm", 0, U, ""},
    MegatronFlag{"--cross-entropy-loss-fusion", 0, I, kNumerics}, MegatronFlag{"--calculate-per-token-loss", 0, I, kNumerics},
    MegatronFlag{"--no-position-embedding", 0, I, "positions follow --position-embedding-type"},
    MegatronFlag{"--use-mcore-models", 0, I, "implementation choice: same model"},
    MegatronFlag{"--transformer-impl", 1, I, "implementation choice: same model"},
    MegatronFlag{"--moe-router-load-balancing-type", 1, I, kNumerics}, MegatronFlag{"--moe-aux-loss-coeff", 1, I, kNumerics},
    MegatronFlag{"--moe-z-loss-coeff", 1, I, kNumerics}, MegatronFlag{"--moe-router-score-function", 1, I, kNumerics},
    MegatronFlag{"--moe-router-pre-softmax", 0, I, kNumerics}, MegatronFlag{"--moe-router-enable-expert-bias", 0, I, kNumerics},
    MegatronFlag{"--moe-router-topk-scaling-factor", 1, I, kNumerics}, MegatronFlag{"--moe-router-bias-update-rate", 1, I, kNumerics},
    MegatronFlag{"--fp8-amax-history-len", 1, I, kNumerics}, MegatronFlag{"--fp8-amax-compute-algo", 1, I, kNumerics},
    MegatronFlag{"--data-path", V, I, kData}, MegatronFlag{"--vocab-file", 1, I, kData},
    MegatronFlag{"--merge-file", 1, I, kData}, MegatronFlag{"--split", 1, I, kData},
    MegatronFlag{"--mock-data", 0, I, kData}, MegatronFlag{"--data-cache-path", 1, I, kData},
    MegatronFlag{"--num-workers", 1, I, kData}, MegatronFlag{"--tiktoken-pattern", 1, I, kData},
    MegatronFlag{"--no-mmap-bin-files", 0, I, kData}, MegatronFlag{"--no-create-attention-mask-in-dataloader", 0, I, kData},
    MegatronFlag{"--save", 1, I, kLogging}, MegatronFlag{"--load", 1, I, kLogging},
    MegatronFlag{"--save-interval", 1, I, kLogging}, MegatronFlag{"--ckpt-format", 1, I, kLogging},
    MegatronFlag{"--no-load-optim", 0, I, kLogging}, MegatronFlag{"--no-load-rng", 0, I, kLogging},
    MegatronFlag{"--log-interval", 1, I, kLogging}, MegatronFlag{"--log-throughput", 0, I, kLogging},
    MegatronFlag{"--eval-interval", 1, I, kLogging}, MegatronFlag{"--eval-iters", 1, I, kLogging},
    MegatronFlag{"--tensorboard-dir", 1, I, kLogging}, MegatronFlag{"--wandb-project", 1, I, kLogging},
    MegatronFlag{"--wandb-exp-name", 1, I, kLogging}, MegatronFlag{"--profile", 0, I, kLogging},
    MegatronFlag{"--profile-step-start", 1, I, kLogging}, MegatronFlag{"--profile-step-end", 1, I, kLogging},
    MegatronFlag{"--distributed-timeout-minutes", 1, I, kLogging}, MegatronFlag{"--exit-duration-in-mins", 1, I, kLogging},
    MegatronFlag{"--manual-gc", 0, I, "host garbage collection timing: not modelled, no GPU effect"},
    MegatronFlag{"--empty-unused-memory-level", 1, I, "allocator cache release: no effect on the step's work"},
};

}  // namespace

const MegatronFlag* find_megatron_flag(std::string_view name) {
  for (const MegatronFlag& f : kFlags) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

int megatron_flag_arity(std::string_view name) {
  const MegatronFlag* f = find_megatron_flag(name);
  return f != nullptr ? f->arity : kUnknownArity;
}

}  // namespace mofasim::interop
