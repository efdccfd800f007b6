// The training stack of an open-set row: the phrases its text states (each as a row of the open set
// writes it), and how they combine with its source's entry.
#include "sim/analysis/measured_open_stack.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "sim/analysis/measured_open_mapping.h"
#include "test/validation/open_rows_for_test.h"

namespace mofasim::analysis {
namespace {

using test::open_row;

StatedStack stated(const std::string& notes, const std::string& optimizer = "none") {
  return stack_stated_in(open_row({{"id", "X-NEW-01"}, {"notes", notes}, {"optimizer_sharding", optimizer}}));
}

TEST(OpenStackText, SequenceParallelismIsOnOrOffAsItsClauseSays) {
  EXPECT_EQ(stated("sequence parallel; TP-comm overlap (userbuffers)").sequence_parallel, true);       // O-MLP-01
  EXPECT_EQ(stated("TE 2.11.0; sequence parallel on when TP>1; mock data").sequence_parallel, true);   // O-SMXB
  EXPECT_EQ(stated("overlap on; sequence_parallel=True (uncertain)").sequence_parallel, true);         // O-ILM-25
  EXPECT_EQ(stated("overlap on; sequence_parallel=False (uncertain)").sequence_parallel, false);       // O-ILM-09
  EXPECT_EQ(stated("TP 4 without sequence-parallel").sequence_parallel, false);
  EXPECT_EQ(stated("derived step_s=4.264").sequence_parallel, std::nullopt);
}

TEST(OpenStackText, TransformerEngineByNameOrByAStackBuiltOnIt) {
  EXPECT_EQ(stated("kernels: TE + DeepEP; fake balanced gate").kernels, model::KernelStack::kTransformerEngine);
  EXPECT_EQ(stated("FP8 hybrid (TransformerEngine delayed scaling)").kernels, model::KernelStack::kTransformerEngine);
  EXPECT_EQ(stated("NeMo 25.04 recipe").kernels, model::KernelStack::kTransformerEngine);
  EXPECT_EQ(stated("Megatron-Core MoE").kernels, model::KernelStack::kTransformerEngine);
  // "TE" only as a word: not inside STEP or a lower-case "te".
  EXPECT_EQ(stated("STEP time measured; note").kernels, std::nullopt);
}

TEST(OpenStackText, GradientReduceOverlapIncludingPyTorchDdp) {
  EXPECT_EQ(stated("distributed optimizer with overlapped grad-reduce/param-gather").dp_overlap, true);  // O-MLP-13
  EXPECT_EQ(stated("Hybrid-Zero overlap of grad sync/param sync on").dp_overlap, true);                // O-ILM-01
  EXPECT_EQ(stated("", "none (plain DDP, apex fused AdamW)").dp_overlap, true);                         // O-FA-04
  EXPECT_EQ(stated("overlap_grad_reduce=False").dp_overlap, false);
  EXPECT_EQ(stated("TP-comm overlap (userbuffers)").dp_overlap, std::nullopt);  // a TP overlap, not DP
}

TEST(OpenStackText, P2pOverlapOffWhenItsClauseSaysDisabled) {
  EXPECT_EQ(stated("TP-comm overlap and P2P overlap disabled (non-overlap contract)").interleaved_p2p_overlap, false);
  EXPECT_EQ(stated("overlap_p2p_comm True").interleaved_p2p_overlap, true);
  EXPECT_EQ(stated("sequence parallel").interleaved_p2p_overlap, std::nullopt);
}

TEST(OpenStackText, FlashAttentionVersionAndUnfusedAttention) {
  EXPECT_EQ(stated("fused dense/MLP/dropout-add-LN kernels, FlashAttention v1; vocab").attention,
            model::AttentionImpl::kFlash1);  // O-FA-01
  EXPECT_EQ(stated("flash-attn==1.0.5").attention, model::AttentionImpl::kFlash1);
  EXPECT_EQ(stated("FlashAttention-2").attention, std::nullopt);
  EXPECT_EQ(stated("published node throughput 1310k tokens/s; FlashAttention 2").attention, std::nullopt);
  EXPECT_EQ(stated("Megatron-LM 2021, no flash attention").attention, model::AttentionImpl::kUnfused);
  EXPECT_EQ(stated("kernels: TE + DeepEP").dispatcher, model::MoeDispatcher::kFlex);
}

// A source the table does not know runs what its text states; a known source keeps its entry except
// where the row states otherwise, and keeps the kernel set read from its code.
TEST(OpenStack, RowTextOverridesTheSourceEntryExceptItsKernelSet) {
  const OpenStack unknown = open_stack(open_row(
      {{"id", "X-NEW-01"}, {"notes", "NeMo; sequence parallel; distributed optimizer with overlapped grad-reduce"}}));
  EXPECT_TRUE(unknown.sequence_parallel);
  EXPECT_TRUE(unknown.dp_overlap);
  EXPECT_EQ(unknown.kernels, model::KernelStack::kTransformerEngine);
  EXPECT_EQ(open_stack(open_row({{"id", "X-NEW-01"}, {"notes", "derived step_s=4.264"}})), OpenStack{});

  const OpenRun internlm = open_row({{"id", "O-ILM-25"}, {"notes", "overlap of grad sync on; sequence_parallel=True"}});
  EXPECT_FALSE(known_source_stack(SourceFramework::kInternEvo)->sequence_parallel);
  EXPECT_TRUE(open_stack(internlm).sequence_parallel);
  EXPECT_EQ(open_stack(internlm).kernels, model::KernelStack::kInternLm);
  EXPECT_EQ(open_stack(open_row({{"id", "O-MLL-02"}, {"notes", "TE mentioned"}})).kernels, model::KernelStack::kUnfused);
  EXPECT_EQ(known_source_stack(SourceFramework::kUnknown), std::nullopt);
}

// A row whose text says FlashAttention-1 on a GPU without its measured curves is listed with that
// reason, not priced (the scenario schema refuses the same combination).
TEST(OpenStack, FlashAttentionOneOnBlackwellIsAReasonNotAnError) {
  const OpenCase c = map_open_run(open_row({{"id", "X-NEW-01"}, {"gpu", "B200"}, {"interconnect", "NVLink5"},
                                            {"gpus", "8"}, {"dp", "8"}, {"global_batch", "64"},
                                            {"notes", "FlashAttention v1"}}));
  EXPECT_FALSE(c.spec.has_value());
  EXPECT_THAT(c.reasons, ::testing::Contains(::testing::HasSubstr("FlashAttention-1 on a GPU without its measured curves")));
}

}  // namespace
}  // namespace mofasim::analysis
