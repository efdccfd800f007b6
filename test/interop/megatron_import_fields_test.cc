// import-megatron, one Megatron argument at a time: the script in, the scenario field it sets out
// (the YAML is loaded and validated as `mofasim simulate` would), for every argument that has a
// field since the layout, precision, recompute and optimizer fields were added; and the ones
// without a field listed as not applied, with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "sim/interop/megatron_import.h"
#include "sim/interop/megatron_script.h"
#include "sim/scenario/loader.h"
#include "test/support/megatron_import.h"

namespace mofasim::interop {
namespace {

// 8 layers of h 256, 8 heads, s 1024 on 8 H100s; each test adds its arguments.
constexpr char kBase[] =
    "--num-layers 8 --hidden-size 256 --num-attention-heads 8 --seq-length 1024 --micro-batch-size 1 --bf16\n"
    "--swiglu --normalization RMSNorm --position-embedding-type rope --vocab-size 1024\n";

struct Imported {
  MegatronImport raw;
  proto::Scenario proto;
};

MegatronImportOptions options(int gpus, int gpus_per_node) {
  MegatronImportOptions o = test::h100_import_options(gpus, "fields");
  o.gpus_per_node = gpus_per_node;
  return o;
}

Imported import(const std::string& args, int gpus = 8, int gpus_per_node = 8) {
  Imported r{.raw = import_megatron(std::string(kBase) + args + "\n", options(gpus, gpus_per_node)), .proto = {}};
  r.proto = scenario::load_scenario_from_string(r.raw.yaml, "fields.yaml").proto;
  return r;
}

std::string error_of(const std::string& args) {
  return test::import_error(std::string(kBase) + args + "\n", options(8, 8));
}

bool listed(const std::vector<MegatronFlagNote>& notes, const std::string& flag, const std::string& reason_part) {
  return std::any_of(notes.begin(), notes.end(), [&](const MegatronFlagNote& n) {
    return n.flag == flag && n.reason.find(reason_part) != std::string::npos;
  });
}

// ---------------------------------------------------------------- layout

TEST(MegatronImportFields, AccountForEmbeddingAndLossInPipelineSplit) {
  const Imported r = import("--pipeline-model-parallel-size 2 --account-for-embedding-in-pipeline-split "
                            "--account-for-loss-in-pipeline-split");
  EXPECT_TRUE(r.proto.parallelism().account_for_embedding_in_pipeline_split());
  EXPECT_TRUE(r.proto.parallelism().account_for_loss_in_pipeline_split());
  EXPECT_TRUE(r.raw.unsupported.empty());
  EXPECT_FALSE(import("--pipeline-model-parallel-size 2").proto.parallelism().has_account_for_loss_in_pipeline_split());
}

TEST(MegatronImportFields, UnevenFirstAndLastStagesBecomeStageLayers) {
  // 8 layers on pp 3: first 1, last 3, the middle stage the other 4.
  const Imported r = import("--pipeline-model-parallel-size 3 --decoder-first-pipeline-num-layers 1 "
                            "--decoder-last-pipeline-num-layers 3", 3, 3);
  EXPECT_EQ(std::vector<int>(r.proto.parallelism().stage_layers().begin(), r.proto.parallelism().stage_layers().end()),
            (std::vector<int>{1, 4, 3}));
  // Virtual stages: 8 layers on pp 2 x vpp 2 with a first stage of 2 and a last of 6; each chunk of
  // a rank holds half its layers, chunk j on rank j % 2: [1, 3, 1, 3].
  const Imported v = import("--pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2 "
                            "--decoder-first-pipeline-num-layers 2 --decoder-last-pipeline-num-layers 6 "
                            "--global-batch-size 16");
  EXPECT_EQ(std::vector<int>(v.proto.parallelism().stage_layers().begin(), v.proto.parallelism().stage_layers().end()),
            (std::vector<int>{1, 3, 1, 3}));
  EXPECT_EQ(error_of("--pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2 "
                     "--decoder-first-pipeline-num-layers 3 --decoder-last-pipeline-num-layers 5"),
            "args.sh:3:75: --decoder-first-pipeline-num-layers: pipeline rank 0's 3 layers do not split over 2 virtual "
            "stages");
  // pp 4 with a first stage of 1 leaves 7 layers for 3 stages: Megatron asserts an even share.
  EXPECT_EQ(error_of("--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 1"),
            "args.sh:3:34: --decoder-first-pipeline-num-layers: the other 3 stages cannot share the remaining 7 of "
            "--num-layers 8 evenly");
}

TEST(MegatronImportFields, TpPpDpMappingIsMetasOrder) {
  EXPECT_EQ(import("--use-tp-pp-dp-mapping").proto.parallelism().rank_order(), "tp-cp-ep-pp-dp");
  EXPECT_EQ(import("").proto.parallelism().rank_order(), "tp-cp-ep-dp-pp");
}

TEST(MegatronImportFields, CpCommType) {
  EXPECT_EQ(import("--context-parallel-size 2 --cp-comm-type a2a").proto.parallelism().cp_comm_type(), proto::CP_A2A);
  EXPECT_EQ(import("--context-parallel-size 2 --cp-comm-type allgather").proto.parallelism().cp_comm_type(),
            proto::CP_ALL_GATHER);
  EXPECT_EQ(import("--context-parallel-size 2 --cp-comm-type p2p p2p").proto.parallelism().cp_comm_type(), proto::CP_P2P);
  const Imported mixed = import("--context-parallel-size 2 --cp-comm-type p2p a2a");
  EXPECT_TRUE(listed(mixed.raw.unsupported, "--cp-comm-type", "per layer"));
  EXPECT_FALSE(mixed.proto.parallelism().has_cp_comm_type());
  EXPECT_TRUE(listed(import("--context-parallel-size 2 --cp-comm-type a2a+p2p").raw.unsupported, "--cp-comm-type",
                     "hierarchical CP"));
  EXPECT_EQ(error_of("--cp-comm-type ring"), "args.sh:3:1: --cp-comm-type: expected p2p, a2a, allgather or a2a+p2p, got 'ring'");
}

TEST(MegatronImportFields, SlidingWindow) {
  // TE's (127, 0): keys i-127 ... i, 128 per query.
  const Imported r = import("--window-size 127,0 --window-attn-skip-freq 2");
  EXPECT_EQ(r.proto.model().window_size(), 128);
  EXPECT_EQ(r.proto.model().window_attn_skip_freq(), 2);
  EXPECT_EQ(import("--window-size '(4095,0)'").proto.model().window_size(), 4096);
  EXPECT_TRUE(listed(import("--window-size 128,128").raw.unsupported, "--window-size", "causal"));
  EXPECT_TRUE(listed(import("--window-size 128,0 --window-attn-skip-freq '[1,1,1,0]*2'").raw.unsupported,
                     "--window-attn-skip-freq", "pattern"));
  EXPECT_EQ(error_of("--window-size 128"), "args.sh:3:1: --window-size: expected 'left,right' with at most 9 digits each (e.g. 128,0), got '128'");
  // A number std::stoll could not hold is refused with its line, not thrown past the importer.
  EXPECT_EQ(error_of("--window-size 99999999999999999999,0"),
            "args.sh:3:1: --window-size: expected 'left,right' with at most 9 digits each (e.g. 128,0), got "
            "'99999999999999999999,0'");
}

// ---------------------------------------------------------------- precision

TEST(MegatronImportFields, Fp8FormatAndRecipe) {
  const Imported r = import("--fp8-format hybrid --fp8-recipe tensorwise --no-fp8-wgrad");
  const proto::Optimizations& o = r.proto.optimizations();
  EXPECT_EQ(o.precision(), proto::FP8);
  EXPECT_EQ(o.compute_dtype(), proto::BF16);
  EXPECT_EQ(o.fp8_recipe(), proto::FP8_CURRENT);  // Megatron's tensorwise is TE's current scaling
  EXPECT_FALSE(o.fp8_wgrad());
  EXPECT_EQ(import("--fp8-format e4m3 --fp8-recipe blockwise").proto.optimizations().fp8_recipe(), proto::FP8_BLOCKWISE);
  EXPECT_EQ(import("--fp8-format e4m3").proto.optimizations().fp8_recipe(), proto::FP8_DELAYED);  // Megatron default
  EXPECT_FALSE(import("--fp8-recipe blockwise").proto.optimizations().has_precision());           // no --fp8-format
  EXPECT_EQ(error_of("--fp8-format e4m3 --fp8-recipe nvfp4"),
            "args.sh:3:19: --fp8-recipe: expected tensorwise, delayed, mxfp8 or blockwise, got 'nvfp4'");
  EXPECT_TRUE(listed(import("--fp8-format e4m3 --first-last-layers-bf16").raw.unsupported, "--first-last-layers-bf16",
                     "not a field"));
}

TEST(MegatronImportFields, Fp16SetsTheParameterDtype) {
  const proto::Scenario s = import("--fp16").proto;
  EXPECT_EQ(s.optimizations().compute_dtype(), proto::FP16);
  EXPECT_EQ(s.optimizations().optimizer().params_dtype(), proto::FP16);
}

// ---------------------------------------------------------------- recompute

TEST(MegatronImportFields, SelectiveRecomputeModules) {
  const proto::Optimizations o =
      import("--recompute-granularity selective --recompute-modules core_attn mlp layernorm").proto.optimizations();
  EXPECT_EQ(o.recompute_granularity(), proto::GRANULARITY_SELECTIVE);
  ASSERT_EQ(o.recompute_modules_size(), 3);
  EXPECT_EQ(o.recompute_modules(0), proto::RECOMPUTE_CORE_ATTN);
  EXPECT_EQ(o.recompute_modules(1), proto::RECOMPUTE_MLP);
  EXPECT_EQ(o.recompute_modules(2), proto::RECOMPUTE_LAYERNORM);
  EXPECT_EQ(error_of("--recompute-granularity selective --recompute-modules attn"),
            "args.sh:3:35: --recompute-modules: expected core_attn, mlp, moe, moe_act, layernorm, mla_up_proj or "
            "shared_experts, got 'attn'");
}

TEST(MegatronImportFields, FullRecomputeMethodAndLayers) {
  const proto::Optimizations u =
      import("--recompute-granularity full --recompute-method uniform --recompute-num-layers 2").proto.optimizations();
  EXPECT_EQ(u.recompute_method(), proto::RECOMPUTE_UNIFORM);
  EXPECT_EQ(u.recompute_num_layers(), 2);
  const proto::Optimizations b =
      import("--recompute-granularity full --recompute-method block --recompute-num-layers 3").proto.optimizations();
  EXPECT_EQ(b.recompute_method(), proto::RECOMPUTE_BLOCK);
  EXPECT_EQ(b.recompute_num_layers(), 3);
}

// ---------------------------------------------------------------- optimizer

TEST(MegatronImportFields, DistributedOptimizerInstances) {
  const proto::Optimizer o =
      import("--use-distributed-optimizer --num-distributed-optimizer-instances 2").proto.optimizations().optimizer();
  EXPECT_TRUE(o.distributed());
  EXPECT_EQ(o.num_distributed_optimizer_instances(), 2);
}

TEST(MegatronImportFields, ShardingStrategies) {
  EXPECT_EQ(import("--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads")
                .proto.optimizations().optimizer().data_parallel_sharding_strategy(),
            proto::OPTIM_GRADS);
  EXPECT_EQ(import("--use-torch-fsdp2").proto.optimizations().optimizer().data_parallel_sharding_strategy(),
            proto::OPTIM_GRADS_PARAMS);
  EXPECT_TRUE(listed(import("--use-megatron-fsdp --data-parallel-sharding-strategy optim").raw.ignored,
                     "--use-megatron-fsdp", "implementation"));
}

TEST(MegatronImportFields, PrecisionAwareOptimizerDtypes) {
  const proto::Optimizer o = import("--use-precision-aware-optimizer --main-grads-dtype bf16 --main-params-dtype fp16 "
                                    "--exp-avg-dtype bf16 --exp-avg-sq-dtype fp8")
                                 .proto.optimizations()
                                 .optimizer();
  EXPECT_EQ(o.main_grads_dtype(), proto::BF16);
  EXPECT_EQ(o.main_params_dtype(), proto::FP16);
  EXPECT_EQ(o.exp_avg_dtype(), proto::BF16);
  EXPECT_EQ(o.exp_avg_sq_dtype(), proto::FP8);
  EXPECT_EQ(import("--grad-reduce-in-bf16").proto.optimizations().optimizer().main_grads_dtype(), proto::BF16);
  EXPECT_EQ(error_of("--main-params-dtype bf16"), "args.sh:3:1: --main-params-dtype: expected fp32 or fp16, got 'bf16'");
}

TEST(MegatronImportFields, CpuOptimizerOffloadFraction) {
  const Imported all = import("--optimizer-cpu-offload --optimizer-offload-fraction 1.0");
  EXPECT_EQ(all.proto.optimizations().optimizer().placement(), proto::CPU);
  EXPECT_TRUE(all.raw.unsupported.empty());
  EXPECT_TRUE(listed(import("--optimizer-cpu-offload --optimizer-offload-fraction 0.5").raw.unsupported,
                     "--optimizer-offload-fraction", "all of it"));
}

// ---------------------------------------------------------------- overlaps and MoE

TEST(MegatronImportFields, PipelineOverlap) {
  // The interleaved schedule overlaps its sends unless --no-overlap-p2p-communication; 1F1B waits.
  const std::string vpp = "--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 2 --global-batch-size 16 ";
  EXPECT_TRUE(import(vpp).proto.optimizations().pp_overlap().enabled());
  EXPECT_FALSE(import(vpp + "--no-overlap-p2p-communication").proto.optimizations().pp_overlap().enabled());
  EXPECT_FALSE(import("--pipeline-model-parallel-size 2").proto.optimizations().has_pp_overlap());
  EXPECT_TRUE(listed(import("--overlap-moe-expert-parallel-comm").raw.unsupported, "--overlap-moe-expert-parallel-comm",
                     "combined-1F1B"));
}

TEST(MegatronImportFields, MoeFoldingRoutingAndCapacity) {
  // 8 experts over ep 4 with etp 1 on 8 GPUs of 2 per node: an EP group spans 2 nodes, so a token
  // may reach 2 of the 4 expert groups.
  const Imported r = import("--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 4 "
                            "--expert-tensor-parallel-size 1 --tensor-model-parallel-size 2 "
                            "--moe-token-dispatcher-type allgather --moe-router-num-groups 4 --moe-router-group-topk 2 "
                            "--moe-expert-capacity-factor 1.25 --moe-pad-expert-input-to-capacity",
                            8, 2);
  const proto::MoeConfig& moe = r.proto.model().moe();
  EXPECT_EQ(r.proto.parallelism().etp(), 1);
  EXPECT_EQ(moe.token_dispatcher_type(), proto::DISPATCHER_ALLGATHER);
  EXPECT_EQ(moe.router_num_groups(), 4);
  EXPECT_EQ(moe.router_group_topk(), 2);
  EXPECT_DOUBLE_EQ(moe.expert_capacity_factor(), 1.25);
  EXPECT_TRUE(moe.pad_expert_input_to_capacity());
}

}  // namespace
}  // namespace mofasim::interop
