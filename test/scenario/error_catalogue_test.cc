// The catalogue of bad scenarios: each case is a small YAML text (the base scenario of
// scenario_test_util.h with one line replaced, so line numbers are 1 model, 2 hardware,
// 3 topology, 4 parallelism, 5 extra) plus `--set` overrides, and the EXACT error lines it must
// produce. Columns are 1-based positions of the offending value (or key) in the line shown.
#include <ostream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/scenario/scenario_test_util.h"

namespace mofasim::scenario {
namespace {

using testing::Lines;

struct BadCase {
  std::string name;
  std::string yaml;
  std::vector<std::string> overrides;
  std::vector<std::string> expected;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

std::string model(const std::string& inner) { return "model: {" + inner + "}"; }
// "parallelism: {" is 14 columns, so the first key of `inner` starts at column 15.
std::string parallelism(const std::string& inner) { return "parallelism: {" + inner + "}"; }

std::vector<BadCase> cases() {
  const std::string kDims = "num_layers: 4, hidden_size: 256, num_attention_heads: 8, num_kv_heads: 4, "
                            "ffn_hidden_size: 1024, vocab_size: 1000, seq_length: 128";
  return {
      // ---- reading the YAML ------------------------------------------------------------------
      {"UnknownKeyDidYouMean", Lines{.parallelism = parallelism("tpp: 2, pp: 2, dp: 2, global_batch: 16")}.text(), {},
       {"bad.yaml:4:15: parallelism: unknown field 'tpp'; did you mean 'tp'?"}},
      {"UnknownKeyListsAllowed",
       Lines{.topology = R"(topology: {gpus: 8, switches: 4, intra_node: {bandwidth: "400 GB/s"}, )"
                         R"(inter_node: {bandwidth: "50 GB/s"}})"}
           .text(),
       {},
       {"bad.yaml:3:21: topology: unknown field 'switches'; expected one of gpus, gpus_per_node, "
        "nodes_per_supernode, nics_per_node, intra_node, inter_node, inter_supernode, oversubscription, "
        "bandwidth_decay, all_reduce_algorithm, collective_model, node_hardware"}},
      {"UnknownTopLevelKey", Lines{.extra = "modle: {}"}.text(), {},
       {"bad.yaml:5:1: (top level): unknown field 'modle'; did you mean 'model'?"}},
      {"UnknownUnit",  // "3.35 TB" is a size: the bandwidth spelling is suggested
       Lines{.hardware = R"(hardware: {peak_bf16: "989 TFLOPS", gpu_memory: "80 GiB", hbm_bandwidth: "3.35 TB"})"}
           .text(),
       {},
       {"bad.yaml:2:74: hardware.hbm_bandwidth: unknown bandwidth unit 'TB'; did you mean 'TB/s'?"}},
      {"PlainNumberForUnitField",
       Lines{.hardware = R"(hardware: {peak_bf16: "989 TFLOPS", gpu_memory: 80, hbm_bandwidth: "3.35 TB/s"})"}.text(),
       {},
       {"bad.yaml:2:49: hardware.gpu_memory: expected a size with a unit, such as \"80 GiB\", got '80'"}},
      {"MapWhereIntegerExpected", Lines{.parallelism = parallelism("tp: {two: 2}, pp: 2, dp: 2, global_batch: 16")}.text(),
       {}, {"bad.yaml:4:19: parallelism.tp: expected an integer, got a map"}},
      {"ListWhereSectionExpected", Lines{.topology = "topology: [8, 400]"}.text(), {},
       {"bad.yaml:3:11: topology: expected a map of Topology fields, got a list"}},
      {"YesIsNotABool",
       Lines{.parallelism = parallelism("tp: 2, pp: 2, dp: 2, global_batch: 16, sequence_parallel: yes")}.text(), {},
       {"bad.yaml:4:73: parallelism.sequence_parallel: expected true or false, got 'yes'"}},
      {"DuplicateKey", Lines{.extra = "parallelism: {tp: 4}"}.text(), {},
       {"bad.yaml:5:1: parallelism: duplicate key; first given at bad.yaml:4:1"}},
      {"NegativeInteger", Lines{.parallelism = parallelism("tp: 2, pp: 2, dp: -2, global_batch: 16")}.text(), {},
       {"bad.yaml:4:33: parallelism.dp: must not be negative, got -2"}},
      {"NegativeQuantity",
       Lines{.hardware = R"(hardware: {peak_bf16: "989 TFLOPS", gpu_memory: "-80 GiB", hbm_bandwidth: "3.35 TB/s"})"}
           .text(),
       {},
       {"bad.yaml:2:49: hardware.gpu_memory: must not be negative, got '-80 GiB'"}},
      {"NaN", Lines{.extra = "training: {tokens: .nan}"}.text(), {},
       {"bad.yaml:5:20: training.tokens: must be a finite number, got '.nan'"}},
      {"Infinity", Lines{.extra = "fault_tolerance: {node_failure_rate_per_day: inf}"}.text(), {},
       {"bad.yaml:5:46: fault_tolerance.node_failure_rate_per_day: must be a finite number, got 'inf'"}},
      {"DoubleOutOfRange", Lines{.extra = "training: {tokens: 1e400}"}.text(), {},
       {"bad.yaml:5:20: training.tokens: out of range: '1e400'"}},
      {"IntegerOutOfRange", Lines{.parallelism = parallelism("tp: 2, pp: 2, dp: 2, global_batch: 3000000000")}.text(),
       {}, {"bad.yaml:4:50: parallelism.global_batch: out of range: '3000000000' (at most 2147483647)"}},
      {"FractionForInteger", Lines{.parallelism = parallelism("tp: 2.5, pp: 2, dp: 2, global_batch: 16")}.text(), {},
       {"bad.yaml:4:19: parallelism.tp: expected an integer, got '2.5'"}},
      {"UnknownEnumSpelling",
       Lines{.parallelism = parallelism("tp: 2, pp: 2, dp: 2, global_batch: 16, schedule: interleaved")}.text(), {},
       {"bad.yaml:4:64: parallelism.schedule: unknown schedule 'interleaved'; did you mean 'interleaved-1f1b'?"}},
      {"MissingValue", "model:\n  num_layers:\n", {},
       {"bad.yaml:2:3: model.num_layers: expected an integer, got nothing"}},
      {"DocumentIsNotAMap", "just a sentence\n", {},
       {"bad.yaml:1:1: expected a map of Scenario fields (model, hardware, ...), got 'just a sentence'"}},
      {"YamlSyntaxError", Lines{.parallelism = "parallelism: {tp: 2, pp: 2"}.text(), {},
       {"bad.yaml:5:1: invalid YAML: end of map flow not found"}},
      {"TwoDocuments", Lines{.extra = "---\nname: second"}.text(), {},
       {"bad.yaml:5:1: expected one YAML document, found a second one"}},
      {"StrayCommaBeforeTheDocument", "," + Lines{}.text(), {},  // yaml-cpp alone would never return
       {"bad.yaml:1:1: invalid YAML: unexpected ',' outside a [ ] or { } collection"}},
      {"StrayCommaInsideTheDocument", Lines{.extra = ", name: x"}.text(), {},
       {"bad.yaml:5:1: invalid YAML: end of map not found"}},
      {"ManyReadErrorsCollected",  // every bad value is reported, not just the first
       Lines{.parallelism = parallelism("tp: two, pp: -1, dp: 2, global_batch: 16, schedule: 1F1B"),
             .extra = "training: {step: 10}"}
           .text(),
       {},
       {"bad.yaml:4:19: parallelism.tp: expected an integer, got 'two'",
        "bad.yaml:4:28: parallelism.pp: must not be negative, got -1",
        "bad.yaml:4:67: parallelism.schedule: unknown schedule '1F1B'; did you mean '1f1b'?",
        "bad.yaml:5:12: training: unknown field 'step'; did you mean 'steps'?"}},
      // ---- presets ---------------------------------------------------------------------------
      {"UnknownPresetListsKnown", Lines{.model = model("preset: llama9")}.text(), {},
       {"bad.yaml:1:17: model.preset: unknown model preset 'llama9'; expected one of broken, test-model, test-moe"}},
      {"MisspeltPresetDidYouMean", Lines{.hardware = "hardware: {preset: test-gpuu}"}.text(), {},
       {"bad.yaml:2:20: hardware.preset: unknown hardware preset 'test-gpuu'; did you mean 'test-gpu'? "
        "(known: test-gpu)"}},
      {"ErrorsInsideAPresetNameThePresetFile", Lines{.model = model("preset: broken")}.text(), {},
       {"presets/models/broken.yaml:1:13: model.num_layers: must not be negative, got -4",
        "presets/models/broken.yaml:2:1: model: unknown field 'hiden_size'; did you mean 'hidden_size'?"}},
      // ---- --set -----------------------------------------------------------------------------
      {"SetUnknownPath", Lines{}.text(), {"parallelism.tpp=4"},
       {"--set:1:13: parallelism: unknown field 'tpp'; did you mean 'tp'?"}},
      {"SetPlainNumberForUnitField", Lines{}.text(), {"topology.intra_node.bandwidth=300"},
       {"--set:1:31: topology.intra_node.bandwidth: expected a bandwidth with a unit, such as \"400 GB/s\", got '300'"}},
      {"SetWithoutEquals", Lines{}.text(), {"parallelism.tp"},
       {"--set:1:1: expected field.path=value (e.g. parallelism.tp=4), got 'parallelism.tp'"}},
      {"SetInsideAScalar", Lines{}.text(), {"parallelism.tp.x=1"},
       {"--set:1:13: parallelism.tp: is not a map of fields, so nothing can be set inside it"}},
      {"SetErrorNamesItsPosition", Lines{}.text(), {"parallelism.tp=4", "model.num_layers=-1"},
       {"--set:2:18: model.num_layers: must not be negative, got -1"}},
      {"SetValueIsValidatedLikeTheFile", Lines{}.text(), {"parallelism.tp=8", "parallelism.pp=1", "parallelism.dp=1"},
       {"--set:1:16: parallelism.tp: 8 does not divide model.num_kv_heads = 4"}},
      {"SetGpuCountMismatchPointsAtTheSection", Lines{}.text(), {"parallelism.tp=4"},
       {"bad.yaml:4:14: parallelism: tp*cp*pp*dp = 4*1*2*2 = 16 but topology.gpus = 8"}},
      // ---- validation: required fields -------------------------------------------------------
      {"RequiredFieldMissing",
       Lines{.hardware = R"(hardware: {peak_bf16: "989 TFLOPS", gpu_memory: "80 GiB"})"}.text(), {},
       {"bad.yaml:2:11: hardware.hbm_bandwidth: missing (required), e.g. \"400 GB/s\""}},
      {"EmptyDocumentNamesEverySection", "", {},
       {"bad.yaml:1:1: model: missing (required: num_layers, hidden_size, num_attention_heads, ffn_hidden_size, "
        "vocab_size, seq_length)",
        "bad.yaml:1:1: hardware: missing (required: peak_bf16, gpu_memory, hbm_bandwidth)",
        "bad.yaml:1:1: topology: missing (required: gpus, intra_node, inter_node)",
        "bad.yaml:1:1: parallelism: missing (required: global_batch)"}},
      {"MlaNeedsItsDimensions", Lines{.model = model(kDims + ", attention: mla")}.text(), {},
       {"bad.yaml:1:8: model.mla: missing (required when attention is mla)"}},
      // ---- validation: sizes and divisibility ------------------------------------------------
      {"GpuCountMismatch", Lines{.parallelism = parallelism("tp: 2, pp: 2, dp: 3, global_batch: 12")}.text(), {},
       {"bad.yaml:4:14: parallelism: tp*cp*pp*dp = 2*1*2*3 = 12 but topology.gpus = 8"}},
      {"TpMustDivideHeads", Lines{.parallelism = parallelism("tp: 8, pp: 1, dp: 1, global_batch: 16")}.text(), {},
       {"bad.yaml:4:19: parallelism.tp: 8 does not divide model.num_kv_heads = 4"}},
      {"KvHeadsMustDivideHeads",  // num_kv_heads = 3: breaks GQA grouping and the tp = 2 split
       Lines{.model = model("num_layers: 4, hidden_size: 256, num_attention_heads: 8, num_kv_heads: 3, "
                            "ffn_hidden_size: 1024, vocab_size: 1000, seq_length: 128")}
           .text(),
       {},
       {"bad.yaml:1:80: model.num_kv_heads: 3 does not divide num_attention_heads = 8",
        "bad.yaml:4:19: parallelism.tp: 2 does not divide model.num_kv_heads = 3"}},
      {"HiddenNotMultipleOfHeads",
       Lines{.model = model("num_layers: 4, hidden_size: 250, num_attention_heads: 8, num_kv_heads: 4, "
                            "ffn_hidden_size: 1024, vocab_size: 1000, seq_length: 128")}
           .text(),
       {},
       {"bad.yaml:1:37: model.hidden_size: 250 is not a multiple of num_attention_heads = 8; give head_dim explicitly"}},
      {"LayersMustSplitOverStages",
       Lines{.model = model("num_layers: 6, hidden_size: 256, num_attention_heads: 8, num_kv_heads: 4, "
                            "ffn_hidden_size: 1024, vocab_size: 1000, seq_length: 128"),
             .parallelism = parallelism("tp: 2, pp: 4, dp: 1, global_batch: 16")}
           .text(),
       {},
       {"bad.yaml:4:26: parallelism.pp: pp*vpp = 4*1 = 4 does not divide model.num_layers = 6; give stage_layers for "
        "an uneven split"}},
      {"StageLayersCountEntriesAndSum",
       Lines{.parallelism = parallelism("tp: 2, pp: 2, dp: 2, global_batch: 16, stage_layers: [1, 0, 2]")}.text(), {},
       {"bad.yaml:4:68: parallelism.stage_layers: has 3 entries but pp*vpp = 2",
        "bad.yaml:4:68: parallelism.stage_layers: entries sum to 3 but model.num_layers = 4"}},
      {"StageLayersAreNotNegative",
       Lines{.parallelism = parallelism("tp: 2, pp: 2, dp: 2, global_batch: 16, stage_layers: [5, -1]")}.text(), {},
       {"bad.yaml:4:72: parallelism.stage_layers[1]: must not be negative, got -1"}},
      // ep 4 with etp = tp = 2 needs 8 folded ranks, tp*cp*dp has 4 (with etp 1 ep 4 would fold).
      {"EpMustDivideExpertsAndTheFoldedGroup",
       Lines{.model = model("preset: test-moe, moe: {num_experts: 6}"),
             .parallelism = parallelism("tp: 2, pp: 2, dp: 2, ep: 4, etp: 2, global_batch: 16")}
           .text(),
       {},
       {"bad.yaml:4:40: parallelism.ep: 4 does not divide model.moe.num_experts = 6",
        "bad.yaml:4:40: parallelism.ep: ep*etp = 4*2 = 8 does not divide the folded group tp*cp*dp = 4"}},
      {"EpNeedsMoe", Lines{.parallelism = parallelism("tp: 2, pp: 2, dp: 2, ep: 2, global_batch: 16")}.text(), {},
       {"bad.yaml:4:40: parallelism.ep: 2 needs a MoE model (model.moe)"}},
      {"TopKAtMostExperts", Lines{.model = model("preset: test-moe, moe: {top_k: 9}")}.text(), {},
       {"bad.yaml:1:40: model.moe.top_k: 9 exceeds num_experts = 8"}},
      {"QkLayernormNotWithMla",
       Lines{.model = model("preset: test-model, attention: mla, mla: {kv_lora_rank: 64, qk_nope_head_dim: 32, "
                            "qk_rope_head_dim: 16, v_head_dim: 32}, qk_layernorm: true")}
           .text(),
       {},
       {"bad.yaml:1:144: model.qk_layernorm: not with attention: mla (its q and kv latent norms are part of the QKV "
        "projection)"}},
      {"MoeLayerPatternEntriesAreZeroOrOne", Lines{.model = model("preset: test-moe, moe: {layer_pattern: [0, 2]}")}.text(),
       {},
       {"bad.yaml:1:52: model.moe.layer_pattern[1]: must be at most 1 (entries are 0 (dense FFN) or 1 (MoE); a "
        "pattern covers at most 64 layers before it repeats), got 2"}},
      {"MoeLayerPatternNeedsAMoeLayer", Lines{.model = model("preset: test-moe, moe: {layer_pattern: [0, 0]}")}.text(),
       {},
       {"bad.yaml:1:48: model.moe.layer_pattern: makes no layer MoE (every entry a layer past first_k_dense_layers "
        "takes is 0)"}},
      {"GlobalBatchMultipleOfMicroBatchTimesDp",
       Lines{.parallelism = parallelism("tp: 2, pp: 2, dp: 2, global_batch: 15")}.text(), {},
       {"bad.yaml:4:50: parallelism.global_batch: 15 is not a multiple of micro_batch*dp = 1*2 = 2"}},
      {"CpNeedsSeqDivisibleByTwoCp",
       Lines{.model = model("num_layers: 4, hidden_size: 256, num_attention_heads: 8, num_kv_heads: 4, "
                            "ffn_hidden_size: 1024, vocab_size: 1000, seq_length: 130"),
             .parallelism = parallelism("tp: 2, cp: 2, pp: 2, global_batch: 16")}
           .text(),
       {},
       {"bad.yaml:4:26: parallelism.cp: model.seq_length = 130 is not divisible by 2*cp = 4 (causal load balancing "
        "gives each CP rank two chunks)"}},
      // ---- validation: schedules -------------------------------------------------------------
      {"InterleavedNeedsVpp",
       Lines{.parallelism = parallelism("tp: 2, pp: 2, dp: 2, global_batch: 16, schedule: interleaved-1f1b")}.text(), {},
       {"bad.yaml:4:14: parallelism.vpp: interleaved-1f1b needs vpp > 1, got 1"}},
      {"InterleavedNeedsMicroBatchesMultipleOfPp",
       Lines{.parallelism = parallelism("tp: 2, pp: 2, vpp: 2, dp: 2, global_batch: 6, schedule: interleaved-1f1b")}
           .text(),
       {},
       {"bad.yaml:4:58: parallelism.global_batch: interleaved-1f1b needs the micro-batch count m = "
        "global_batch/(micro_batch*dp) = 3 to be a multiple of pp = 2"}},
      {"VppNeedsInterleaved", Lines{.parallelism = parallelism("tp: 2, pp: 2, vpp: 2, dp: 2, global_batch: 16")}.text(),
       {}, {"bad.yaml:4:34: parallelism.vpp: 2 needs schedule: interleaved-1f1b"}},
      {"DualPipeNeedsEvenPp",
       Lines{.parallelism = parallelism("tp: 2, pp: 1, dp: 4, global_batch: 16, schedule: dualpipe")}.text(), {},
       {"bad.yaml:4:26: parallelism.pp: dualpipe needs an even pp, got 1"}},
      {"DualPipeNeedsEvenMicroBatches",
       Lines{.parallelism = parallelism("tp: 2, pp: 2, dp: 2, global_batch: 6, schedule: dualpipe")}.text(), {},
       {"bad.yaml:4:50: parallelism.global_batch: dualpipe needs the micro-batch count m = "
        "global_batch/(micro_batch*dp) = 3 to be even"}},
      {"RankOrderLeavesOutOnlyDimensionsOfSizeOne",  // dp is 2 (tp-dp-pp would be fine: cp = ep = 1)
       Lines{.parallelism = parallelism("tp: 2, pp: 2, dp: 2, global_batch: 16, rank_order: tp-pp")}.text(), {},
       {"bad.yaml:4:66: parallelism.rank_order: 'tp-pp' leaves out dp, whose size is 2; Megatron appends only the "
        "dimensions of size 1 an order leaves out"}},
      {"RankOrderNamesEachDimensionOnce",
       Lines{.parallelism = parallelism("tp: 2, pp: 2, dp: 2, global_batch: 16, rank_order: tp-dp-pp-dp")}.text(), {},
       {"bad.yaml:4:66: parallelism.rank_order: 'tp-dp-pp-dp' names 'dp' twice (expected names from tp, cp, ep, dp, "
        "pp joined by '-', each at most once, e.g. 'tp-cp-ep-dp-pp')"}},
      {"ManyValidationErrorsCollected",  // tp = 3 breaks the GPU count, both head counts and the batch is odd
       Lines{.parallelism = parallelism("tp: 3, pp: 2, dp: 2, global_batch: 15")}.text(), {},
       {"bad.yaml:4:14: parallelism: tp*cp*pp*dp = 3*1*2*2 = 12 but topology.gpus = 8",
        "bad.yaml:4:19: parallelism.tp: 3 does not divide model.num_attention_heads = 8",
        "bad.yaml:4:19: parallelism.tp: 3 does not divide model.num_kv_heads = 4",
        "bad.yaml:4:50: parallelism.global_batch: 15 is not a multiple of micro_batch*dp = 1*2 = 2"}},
      // ---- validation: ranges ----------------------------------------------------------------
      {"CollectiveSmsBelowSmCount",
       Lines{.hardware = R"(hardware: {peak_bf16: "989 TFLOPS", gpu_memory: "80 GiB", hbm_bandwidth: "3.35 TB/s", )"
                         R"(kernels: {sm_count: 132}, collective_sms: 132})"}
           .text(),
       {},
       {"bad.yaml:2:129: hardware.collective_sms: must be below kernels.sm_count = 132 (a communication kernel cannot hold "
        "every SM), got 132"}},
      {"OverlapAlphaAtLeastOne", Lines{.extra = "optimizations: {pp_overlap: {enabled: true, alpha: 0.5}}"}.text(), {},
       {"bad.yaml:5:52: optimizations.pp_overlap.alpha: must be at least 1, got 0.5"}},
      {"BandwidthDecayInUnitInterval",
       Lines{.topology = R"(topology: {gpus: 8, bandwidth_decay: 1.5, intra_node: {bandwidth: "400 GB/s"}, )"
                         R"(inter_node: {bandwidth: "50 GB/s"}})"}
           .text(),
       {},
       {"bad.yaml:3:38: topology.bandwidth_decay: must be in (0, 1], got 1.5"}},
      {"SupernodeMustDivideTheNodes",  // 16 GPUs = 2 nodes of 8; 3 nodes per supernode cannot divide them
       Lines{.topology = R"(topology: {gpus: 16, nodes_per_supernode: 3, intra_node: {bandwidth: "400 GB/s"}, )"
                         R"(inter_node: {bandwidth: "50 GB/s"}})"}
           .text(),
       {},
       {"bad.yaml:3:43: topology.nodes_per_supernode: must divide the node count (2), got 3",
        "bad.yaml:4:14: parallelism: tp*cp*pp*dp = 2*1*2*2 = 8 but topology.gpus = 16"}},
      {"AttentionDropoutBelowOne",
       Lines{.model = "model: {preset: test-model, attention_impl: unfused, attention_dropout: 1.0}"}.text(), {},
       {"bad.yaml:1:73: model.attention_dropout: must be in [0, 1), got 1"}},
      {"OversubscriptionAtLeastOne",
       Lines{.topology = R"(topology: {gpus: 8, oversubscription: 0.5, intra_node: {bandwidth: "400 GB/s"}, )"
                         R"(inter_node: {bandwidth: "50 GB/s"}})"}
           .text(),
       {},
       {"bad.yaml:3:39: topology.oversubscription: must be at least 1, got 0.5"}},
      {"EfficiencyInUnitInterval",
       Lines{.hardware = R"(hardware: {preset: test-gpu, efficiency: {gemm: 0}})"}.text(), {},
       {"bad.yaml:2:49: hardware.efficiency.gemm: must be in (0, 1], got 0"}},
      {"ZeroBandwidth",
       Lines{.topology = R"(topology: {gpus: 8, intra_node: {bandwidth: "0 GB/s"}, inter_node: {bandwidth: "50 GB/s"}})"}
           .text(),
       {},
       {"bad.yaml:3:45: topology.intra_node.bandwidth: must be greater than 0, got 0"}},
      {"TrainingTokensXorSteps", Lines{.extra = "training: {tokens: 1e12, steps: 10}"}.text(), {},
       {"bad.yaml:5:11: training: give tokens or steps, not both"}},
      {"CheckpointIntervalAtLeastOne",
       Lines{.extra = R"(fault_tolerance: {node_failure_rate_per_day: 0.005, checkpoint: {interval_steps: 0, save_time: "4 s"}})"}
           .text(),
       {},
       {"bad.yaml:5:82: fault_tolerance.checkpoint.interval_steps: must be at least 1, got 0"}},
      {"FailureClassWeightPositive",
       Lines{.extra = R"(fault_tolerance: {node_failure_rate_per_day: 0.005, failure_classes: [{name: pod, weight: 0, recovery: "262 s"}]})"}
           .text(),
       {},
       {"bad.yaml:5:91: fault_tolerance.failure_classes[0].weight: must be greater than 0, got 0"}},
      {"EmpiricalRecoveryNeedsSamples",
       Lines{.extra = "fault_tolerance: {node_failure_rate_per_day: 0.005, failure_classes: [{name: pod, weight: 1, "
                      "distribution: empirical}]}"}
           .text(),
       {},
       {"bad.yaml:5:71: fault_tolerance.failure_classes[0].samples: missing (required by distribution empirical)"}},
      {"Fp8NeedsPeakFp8", Lines{.extra = "optimizations: {compute_dtype: fp8}"}.text(), {},
       {"bad.yaml:2:11: hardware.peak_fp8: missing (required by compute_dtype fp8), e.g. \"989 TFLOPS\""}},
      {"PrecisionFp8NeedsPeakFp8", Lines{.extra = "optimizations: {precision: fp8}"}.text(), {},
       {"bad.yaml:2:11: hardware.peak_fp8: missing (required by precision fp8), e.g. \"989 TFLOPS\""}},
      {"PrecisionIsBf16OrFp8", Lines{.extra = "optimizations: {precision: fp16}"}.text(), {},
       {"bad.yaml:5:28: optimizations.precision: must be bf16 or fp8 (fp16 / fp32 training: compute_dtype and "
        "optimizer.params_dtype)"}},
      {"Fp8RecipeNeedsPrecisionFp8", Lines{.extra = "optimizations: {fp8_recipe: current}"}.text(), {},
       {"bad.yaml:5:29: optimizations.fp8_recipe: needs precision: fp8"}},
      {"Mxfp8NeedsBlackwell",
       Lines{.hardware = R"(hardware: {peak_bf16: "989 TFLOPS", peak_fp8: "1979 TFLOPS", gpu_memory: "80 GiB", )"
                         R"(hbm_bandwidth: "3.35 TB/s", compute_model: kernel, kernels: {family: hopper, sm_count: 132, )"
                         R"(gemm_ceiling_bf16: "794 TFLOPS", gemm_ceiling_fp8: "1402 TFLOPS", hbm_fraction: 0.9}})",
             .extra = "optimizations: {precision: fp8, fp8_recipe: mxfp8}"}
           .text(),
       {},
       {"bad.yaml:5:45: optimizations.fp8_recipe: mxfp8 needs a Blackwell GPU (hardware.kernels.family blackwell), "
        "got hopper"}},
      {"Flash1HasNoBlackwellKernel",
       Lines{.model = "model: {num_layers: 4, hidden_size: 256, num_attention_heads: 8, num_kv_heads: 4, "
                      "ffn_hidden_size: 1024, vocab_size: 1000, seq_length: 128, attention_impl: flash1}",
             .hardware = R"(hardware: {peak_bf16: "2250 TFLOPS", gpu_memory: "180 GiB", hbm_bandwidth: "8 TB/s", )"
                         R"(compute_model: kernel, kernels: {family: blackwell, sm_count: 148, )"
                         R"(gemm_ceiling_bf16: "1173 TFLOPS", hbm_fraction: 0.72}})"}
           .text(),
       {},
       {"bad.yaml:1:157: model.attention_impl: flash1 has no Blackwell kernel (hardware.kernels.family blackwell); "
        "use fused"}},
      {"KernelModelNeedsKernelParams",
       Lines{.hardware = R"(hardware: {peak_bf16: "989 TFLOPS", gpu_memory: "80 GiB", hbm_bandwidth: "3.35 TB/s", )"
                         R"(compute_model: kernel})"}
           .text(),
       {},
       {"bad.yaml:2:11: hardware.kernels.family: missing (required by compute_model kernel): ampere, hopper or blackwell",
        "bad.yaml:2:11: hardware.kernels.sm_count: must be at least 1 for compute_model kernel, got 0",
        "bad.yaml:2:11: hardware.kernels.gemm_ceiling_bf16: missing (required by compute_model kernel), e.g. \"989 TFLOPS\"",
        "bad.yaml:2:11: hardware.kernels.hbm_fraction: must be in (0, 1], got 0"}},
      {"KernelModelHbmFractionAndFp8Ceiling",
       Lines{.hardware = R"(hardware: {peak_bf16: "989 TFLOPS", peak_fp8: "1979 TFLOPS", gpu_memory: "80 GiB", )"
                         R"(hbm_bandwidth: "3.35 TB/s", compute_model: kernel, kernels: {family: hopper, sm_count: 132, )"
                         R"(gemm_ceiling_bf16: "794 TFLOPS", hbm_fraction: 1.5}})",
             .extra = "optimizations: {compute_dtype: fp8}"}
           .text(),
       {},
       {"bad.yaml:2:223: hardware.kernels.hbm_fraction: must be in (0, 1], got 1.5",
        "bad.yaml:2:144: hardware.kernels.gemm_ceiling_fp8: missing (required by compute_model kernel with compute_dtype fp8), "
        "e.g. \"989 TFLOPS\""}},
      {"KernelModelGroupedGemmFraction",
       Lines{.hardware = R"(hardware: {peak_bf16: "989 TFLOPS", peak_fp8: "1979 TFLOPS", gpu_memory: "80 GiB", )"
                         R"(hbm_bandwidth: "3.35 TB/s", compute_model: kernel, kernels: {family: hopper, sm_count: 132, )"
                         R"(gemm_ceiling_bf16: "794 TFLOPS", hbm_fraction: 0.8, grouped_gemm_fraction: 0}})"}
           .text(),
       {},
       {"bad.yaml:2:251: hardware.kernels.grouped_gemm_fraction: must be in (0, 1], got 0"}},
  };
}

class ErrorCatalogue : public ::testing::TestWithParam<BadCase> {};

TEST_P(ErrorCatalogue, ReportsExactlyTheseLines) {
  const BadCase& c = GetParam();
  EXPECT_THAT(testing::errors_of(c.yaml, c.overrides), ::testing::ElementsAreArray(c.expected)) << c.yaml;
}

INSTANTIATE_TEST_SUITE_P(Scenario, ErrorCatalogue, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<BadCase>& param_info) { return param_info.param.name; });

TEST(ErrorCatalogueSize, HasAtLeastThirtyCases) { EXPECT_GE(cases().size(), 30U); }

}  // namespace
}  // namespace mofasim::scenario
