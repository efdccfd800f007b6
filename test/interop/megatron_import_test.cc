// import-megatron: argument lists written after Megatron-LM's documented examples (GPT-3 175B,
// Llama 3 8B FP8, Mixtral 8x7B) -> scenario fields, the flags listed as not applied, and the
// errors for bad arguments and missing cluster options.
#include "sim/interop/megatron_import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "sim/interop/megatron_script.h"
#include "sim/scenario/loader.h"
#include "test/cli/run_cli.h"
#include "test/support/megatron_import.h"

namespace mofasim::interop {
namespace {

using test::import_error;

std::string data(const std::string& name) {
  return test::read_file(std::string(MOFASIM_SOURCE_DIR) + "/test/interop/data/" + name);
}

MegatronImportOptions h100(std::optional<int> gpus) { return test::h100_import_options(gpus, "imported"); }

bool listed(const std::vector<MegatronFlagNote>& notes, const std::string& flag, const std::string& value = "") {
  return std::any_of(notes.begin(), notes.end(), [&](const MegatronFlagNote& n) { return n.flag == flag && n.value == value; });
}

TEST(MegatronScript, ContinuationsVariablesQuotesAndArrays) {
  const std::vector<ScriptWord> w = script_words(
      "L=${LAYERS:-24}\nexport H=\"1024\"\nARGS=(\n  \"--num-layers $L\" # comment --ignored\n)\n"
      "run --hidden-size ${H} \\\n  --split '9,1' --x=$UNSET\n");
  std::vector<std::string> text;
  for (const ScriptWord& x : w) text.push_back(x.text);
  EXPECT_EQ(text, (std::vector<std::string>{"--num-layers", "24", "run", "--hidden-size", "1024", "--split", "9,1", "--x=$UNSET"}));
  EXPECT_EQ(w[0].at.line, 4);
  EXPECT_EQ(w[0].at.col, 3);
  EXPECT_EQ(w[5].at.line, 7);  // after the line continuation
  const auto flags = collect_flags(w, [](std::string_view) { return kUnknownArity; });
  ASSERT_EQ(flags.size(), 4u);
  EXPECT_EQ(flags[3].name, "--x");
  EXPECT_EQ(flags[3].values, std::vector<std::string>{"$UNSET"});
}

TEST(MegatronScript, SwitchAtLineEndTakesNoValueFromTheNextLine) {
  const auto flags = collect_flags(script_words("--no-such-switch\nif true\n--other 3\n"),
                                   [](std::string_view) { return kUnknownArity; });
  ASSERT_EQ(flags.size(), 2u);
  EXPECT_TRUE(flags[0].values.empty());
  EXPECT_EQ(flags[1].values, std::vector<std::string>{"3"});
}

TEST(MegatronImport, Gpt3175bFromTheGpt3ExampleLayout) {
  const MegatronImport r = import_megatron(data("gpt3_175b.sh"), h100(std::nullopt));
  const scenario::LoadedScenario s = scenario::load_scenario_from_string(r.yaml, "gpt3.yaml");
  const auto& m = s.proto.model();
  EXPECT_EQ(m.num_layers(), 96);
  EXPECT_EQ(m.hidden_size(), 12288);
  EXPECT_EQ(m.num_attention_heads(), 96);
  EXPECT_EQ(m.ffn_hidden_size(), 4 * 12288);  // Megatron's default 4h
  EXPECT_EQ(m.seq_length(), 2048);
  EXPECT_EQ(m.vocab_size(), 51200);  // 50257 padded to a multiple of 128 * tp 8 = 1024
  EXPECT_EQ(m.mlp(), proto::GELU);
  EXPECT_EQ(m.norm(), proto::LAYERNORM);
  EXPECT_EQ(m.position(), proto::LEARNED);
  EXPECT_FALSE(m.untie_embeddings());
  EXPECT_TRUE(m.linear_bias());
  EXPECT_EQ(s.proto.topology().gpus(), 128);  // torchrun --nnodes 16 x --nproc_per_node 8
  const auto& p = s.proto.parallelism();
  EXPECT_EQ(p.tp(), 8);
  EXPECT_EQ(p.pp(), 16);
  EXPECT_EQ(p.dp(), 1);
  EXPECT_EQ(p.global_batch(), 1536);
  EXPECT_EQ(s.proto.optimizations().compute_dtype(), proto::FP16);
  EXPECT_EQ(s.proto.training().steps(), 500000);
  EXPECT_NE(r.yaml.find("num_layers: 96    # --num-layers 96"), std::string::npos);
  EXPECT_TRUE(listed(r.unsupported, "--rampup-batch-size", "16 16 5859375"));
  EXPECT_TRUE(listed(r.ignored, "--lr", "6.0e-5"));
  EXPECT_TRUE(listed(r.ignored, "--master_addr", "localhost"));
  EXPECT_NE(r.yaml.find("#   --rampup-batch-size 16 16 5859375 (line 23)"), std::string::npos);
  EXPECT_TRUE(r.unknown.empty());
}

TEST(MegatronImport, Llama3With8bFp8FromTheLlamaExampleLayout) {
  const MegatronImport r = import_megatron(data("llama3_8b_fp8.sh"), h100(16));
  const scenario::LoadedScenario s = scenario::load_scenario_from_string(r.yaml, "llama3.yaml");
  const auto& m = s.proto.model();
  EXPECT_EQ(m.num_kv_heads(), 8);
  EXPECT_EQ(m.head_dim(), 128);
  EXPECT_EQ(m.ffn_hidden_size(), 14336);
  EXPECT_EQ(m.seq_length(), 8192);
  EXPECT_EQ(m.vocab_size(), 128256);  // Llama 3 tokenizer; already a multiple of 128 * 2
  EXPECT_EQ(m.mlp(), proto::SWIGLU);
  EXPECT_EQ(m.norm(), proto::RMSNORM);
  EXPECT_EQ(m.position(), proto::ROPE);
  EXPECT_TRUE(m.untie_embeddings());
  EXPECT_FALSE(m.linear_bias());
  const auto& p = s.proto.parallelism();
  EXPECT_EQ(p.tp(), 2);  // ${TP:-2}
  EXPECT_EQ(p.cp(), 2);
  EXPECT_EQ(p.dp(), 4);  // 16 / (2 * 2 * 1)
  EXPECT_TRUE(p.sequence_parallel());
  const auto& o = s.proto.optimizations();
  EXPECT_EQ(o.compute_dtype(), proto::BF16);  // --bf16; FP8 is Transformer Engine's precision: fp8
  EXPECT_EQ(o.precision(), proto::FP8);
  EXPECT_EQ(o.fp8_recipe(), proto::FP8_DELAYED);
  EXPECT_TRUE(o.optimizer().distributed());
  EXPECT_TRUE(o.dp_overlap().enabled());
  EXPECT_TRUE(o.tp_overlap().enabled());
  EXPECT_EQ(o.recompute(), proto::SELECTIVE);
  EXPECT_DOUBLE_EQ(s.proto.training().tokens(), 1953125000.0 * 8192);
  EXPECT_FALSE(listed(r.unsupported, "--fp8-recipe", "delayed"));
  EXPECT_TRUE(listed(r.unsupported, "--fp8-param-gather"));
  ASSERT_EQ(r.unknown.size(), 1u);
  EXPECT_EQ(r.unknown[0].flag, "--my-custom-flag");
  EXPECT_EQ(r.unknown[0].value, "7");
  EXPECT_EQ(r.unknown[0].line, 26);
}

TEST(MegatronImport, Mixtral8x7bMoeWithVirtualStagesAndFullRecompute) {
  const MegatronImport r = import_megatron(data("mixtral_8x7b.txt"), h100(64));
  const scenario::LoadedScenario s = scenario::load_scenario_from_string(r.yaml, "mixtral.yaml");
  const auto& moe = s.proto.model().moe();
  EXPECT_EQ(moe.num_experts(), 8);
  EXPECT_EQ(moe.top_k(), 2);
  EXPECT_EQ(moe.expert_ffn_hidden_size(), 14336);
  EXPECT_EQ(s.proto.model().vocab_size(), 32000);  // Llama2Tokenizer, a multiple of 128 already
  const auto& p = s.proto.parallelism();
  EXPECT_EQ(p.ep(), 8);
  EXPECT_EQ(p.pp(), 4);
  EXPECT_EQ(p.vpp(), 2);  // 32 layers / (4 per virtual stage * pp 4)
  EXPECT_EQ(p.schedule(), proto::INTERLEAVED_1F1B);
  EXPECT_EQ(p.dp(), 16);
  EXPECT_EQ(s.proto.optimizations().recompute(), proto::FULL);
  EXPECT_TRUE(listed(r.unsupported, "--moe-grouped-gemm"));
  EXPECT_TRUE(listed(r.ignored, "--moe-aux-loss-coeff", "1e-2"));
  EXPECT_FALSE(listed(r.unsupported, "--moe-token-dispatcher-type", "alltoall"));  // the modelled dispatcher
}

TEST(MegatronImport, InterleavedMoeLayersBecomeALayerPattern) {
  // Mixtral's 32 layers with Megatron's --moe-layer-freq in its three written forms.
  auto pattern_of = [](const std::string& freq) {
    const MegatronImport r = import_megatron(data("mixtral_8x7b.txt") + "--moe-layer-freq " + freq + "\n", h100(64));
    const scenario::LoadedScenario s = scenario::load_scenario_from_string(r.yaml, "mixtral.yaml");
    EXPECT_FALSE(listed(r.unsupported, "--moe-layer-freq")) << freq;
    const auto& p = s.proto.model().moe().layer_pattern();
    return std::vector<int>(p.begin(), p.end());
  };
  // An integer N: layer i is MoE when i % N == 0.
  EXPECT_EQ(pattern_of("2"), (std::vector<int>{1, 0}));
  EXPECT_EQ(pattern_of("4"), (std::vector<int>{1, 0, 0, 0}));
  // A repeated list (Llama 4 Maverick's dense-then-MoE alternation).
  EXPECT_EQ(pattern_of("'([0,1]*16)'"), (std::vector<int>{0, 1}));
  EXPECT_EQ(pattern_of("'([0,0,1,1]*8)'"), (std::vector<int>{0, 0, 1, 1}));
  // --qk-layernorm becomes the q/k head norms (and is no numerics-only flag any more).
  const MegatronImport qk = import_megatron(data("mixtral_8x7b.txt") + "--qk-layernorm\n", h100(64));
  EXPECT_TRUE(scenario::load_scenario_from_string(qk.yaml, "qk.yaml").proto.model().qk_layernorm());
  EXPECT_FALSE(listed(qk.ignored, "--qk-layernorm"));
  // Periods the schema cannot repeat are listed as not applied, whatever their size.
  for (const std::string freq : {"0", "65", "99999999999999"}) {
    const MegatronImport r = import_megatron(data("mixtral_8x7b.txt") + "--moe-layer-freq " + freq + "\n", h100(64));
    EXPECT_TRUE(listed(r.unsupported, "--moe-layer-freq", freq)) << freq;
  }
  // A list that does not cover the layers is refused on its line.
  const std::string script = data("mixtral_8x7b.txt");
  const auto line = std::to_string(std::count(script.begin(), script.end(), '\n') + 1);
  EXPECT_EQ(import_error(script + "--moe-layer-freq '([0,1]*15)'\n", h100(64)),
            "args.sh:" + line + ":1: --moe-layer-freq: pattern covers 30 layers, --num-layers is 32");
  EXPECT_EQ(import_error(script + "--moe-layer-freq '([0,1]*99999999999999)'\n", h100(64)),
            "args.sh:" + line + ":1: --moe-layer-freq: pattern covers too many layers, --num-layers is 32");
}

TEST(MegatronImport, DeepSeekV3MlaSharedExpertsDenseFirstLayersAndMtp) {
  MegatronImportOptions o = h100(16);
  o.hardware_preset = "h800";
  const MegatronImport r = import_megatron(data("deepseek_v3.txt"), o);
  const scenario::LoadedScenario s = scenario::load_scenario_from_string(r.yaml, "deepseek.yaml");
  const auto& m = s.proto.model();
  EXPECT_EQ(m.attention(), proto::MLA);
  EXPECT_EQ(m.mla().q_lora_rank(), 1536);
  EXPECT_EQ(m.mla().kv_lora_rank(), 512);
  EXPECT_EQ(m.mla().qk_nope_head_dim(), 128);
  EXPECT_EQ(m.mla().qk_rope_head_dim(), 64);
  EXPECT_EQ(m.mla().v_head_dim(), 128);
  EXPECT_EQ(m.moe().num_experts(), 256);
  EXPECT_EQ(m.moe().top_k(), 8);
  EXPECT_EQ(m.moe().expert_ffn_hidden_size(), 2048);
  EXPECT_EQ(m.moe().num_shared_experts(), 1);
  EXPECT_EQ(m.moe().shared_expert_ffn_hidden_size(), 2048);
  EXPECT_EQ(m.moe().first_k_dense_layers(), 3);  // '([0]*3+[1]*58)'
  EXPECT_EQ(m.mtp_depth(), 1);
  EXPECT_EQ(m.vocab_size(), 129280);  // a multiple of 128 * tp 2 already
  EXPECT_EQ(s.proto.parallelism().ep(), 8);
  EXPECT_EQ(s.proto.parallelism().etp(), 1);
  EXPECT_EQ(s.proto.parallelism().dp(), 8);
  EXPECT_EQ(s.proto.optimizations().precision(), proto::FP8);
  EXPECT_EQ(s.proto.optimizations().recompute(), proto::FULL);
  EXPECT_EQ(s.proto.optimizations().recompute_granularity(), proto::GRANULARITY_FULL);
  EXPECT_EQ(s.proto.optimizations().recompute_method(), proto::RECOMPUTE_BLOCK);  // 20 layers per chunk
  EXPECT_EQ(s.proto.optimizations().recompute_num_layers(), 20);
  EXPECT_EQ(s.proto.topology().intra_node().bandwidth(), 160e9);  // the h800 default
  EXPECT_EQ(m.moe().token_dispatcher_type(), proto::DISPATCHER_FLEX);  // DeepEP, modelled since folding
  EXPECT_FALSE(listed(r.unsupported, "--moe-token-dispatcher-type", "flex"));
  EXPECT_TRUE(r.unsupported.empty());
  EXPECT_TRUE(listed(r.ignored, "--recompute-modules", "mla_up_proj mlp"));  // selective only
  EXPECT_TRUE(listed(r.ignored, "--moe-router-score-function", "sigmoid"));
}

TEST(MegatronImport, BadArgumentsNameTheirLine) {
  const std::string shape = "--hidden-size 64 --num-attention-heads 4 --seq-length 128 --micro-batch-size 1\n";
  EXPECT_EQ(import_error(shape + "--num-layers abc\n", h100(8)),
            "args.sh:2:1: --num-layers: expected an integer, got 'abc'");
  EXPECT_EQ(import_error(shape + "  --num-layers $NL\n", h100(8)),
            "args.sh:2:3: --num-layers: value '$NL' is a variable the script never sets");
  EXPECT_EQ(import_error(shape + "--num-layers 0\n", h100(8)), "args.sh:2:1: --num-layers: must be >= 1, got 0");
  EXPECT_EQ(import_error(shape + "--num-layers 4 --normalization BatchNorm\n", h100(8)),
            "args.sh:2:16: --normalization: expected LayerNorm or RMSNorm, got 'BatchNorm'");
  EXPECT_EQ(import_error(shape + "--num-layers 4 --global-batch-size 6\n", h100(8)),
            "args.sh:2:16: --global-batch-size: must be a multiple of micro-batch x data-parallel size = 8");
  EXPECT_EQ(import_error("--num-layers 4 " + shape, h100(8)), "no error");
  EXPECT_EQ(import_error("--hidden-size 64", h100(8)), "args.sh: --num-layers: required (the model's shape)");
}

TEST(MegatronImport, MissingClusterOptionsAreCliErrors) {
  const std::string args = "--num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --micro-batch-size 1 "
                           "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 4\n";
  EXPECT_EQ(import_error(args, h100(100)), "mofasim import-megatron: --gpus: 100 is not a multiple of tp*cp*pp = 16");
  EXPECT_EQ(import_error(args, h100(std::nullopt)),
            "mofasim import-megatron: --gpus: required: the job's GPU count (or a torchrun --nnodes and "
            "--nproc_per_node in the script)");
  MegatronImportOptions no_hw = h100(16);
  no_hw.hardware_preset.clear();
  EXPECT_EQ(import_error(args, no_hw),
            "mofasim import-megatron: --hardware: required: the GPU preset (Megatron's arguments do not name the hardware)");
  MegatronImportOptions device_a = h100(16);
  device_a.hardware_preset = "mofa-device-a";
  EXPECT_EQ(import_error(args, device_a),
            "mofasim import-megatron: --intra-node-bandwidth: required for hardware 'mofa-device-a' (no default link figures)");
  EXPECT_EQ(import_error(args + "--tokenizer-type SentencePieceTokenizer\n", h100(16)),
            "mofasim import-megatron: --vocab-size: the arguments give no --vocab-size and tokenizer "
            "'SentencePieceTokenizer' has no known size; pass --vocab-size N");
}

TEST(MegatronImportCli, WritesAScenarioThatSimulates) {
  const std::string out = testing::TempDir() + "/mixtral_import.yaml";
  const test::CliRun imp =
      test::run_mofasim("import-megatron test/interop/data/mixtral_8x7b.txt --hardware h100-sxm --gpus 64 -o '" + out + "'");
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  EXPECT_NE(imp.err.find("not applied (not expressible yet): test/interop/data/mixtral_8x7b.txt:5:37: --moe-grouped-gemm"),
            std::string::npos)
      << imp.err;
  const test::CliRun sim = test::run_mofasim("simulate '" + out + "' --json");
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_NE(sim.out.find("\"scenario\": \"mixtral_8x7b\""), std::string::npos);
}

TEST(MegatronImportCli, StdinAndBadOptionsExitTwo) {
  // 8 GPUs at pp 4 leave tp*cp*dp = 2 ranks to fold ep 8 over: the written scenario does not
  // load, and the error names the written line.
  const test::CliRun ep = test::run_mofasim("import-megatron --hardware a100-80gb --gpus 8 < test/interop/data/mixtral_8x7b.txt");
  EXPECT_EQ(ep.exit_code, 2);
  EXPECT_EQ(ep.err.substr(0, ep.err.find('\n')), "<import-megatron output>:48:7: parallelism.ep: ep*etp = 8*1 = 8 does not divide the folded group tp*cp*dp = 2");
  const test::CliRun hw = test::run_mofasim("import-megatron --hardware tpu-v5 --gpus 8 < test/interop/data/mixtral_8x7b.txt");
  EXPECT_EQ(hw.exit_code, 2);
  EXPECT_EQ(hw.err.substr(0, hw.err.find(" (known")), "mofasim import-megatron: --hardware: unknown preset 'tpu-v5'");
  const test::CliRun gpus = test::run_mofasim("import-megatron --hardware h100-sxm --gpus 0 < /dev/null");
  EXPECT_EQ(gpus.exit_code, 2);
  EXPECT_EQ(gpus.err, "mofasim import-megatron: --gpus: must be >= 1, got 0\n");
}

}  // namespace
}  // namespace mofasim::interop
