// DualPipe's pairing in the replay (sim/executor/generate_pipeline.cc, interleave_modules): the
// issue order of a paired forward and backward chunk on in-order streams follows the DeepSeek-V3
// report's Fig. 4, a whole module of one pass under each all-to-all of the other.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/executor/generator.h"
#include "sim/executor/workload.h"

namespace mofasim::executor {
namespace {

// Tasks of one paired forward / backward on a one-rank workload, each named for the expected order.
struct PairTasks {
  Workload w{1, 2};
  std::vector<std::string> names;
  TaskId add(Stream stream, TaskPhase phase, const std::string& name, std::uint32_t layer = kNone) {
    const bool ep = stream == Stream::kEp;
    const TaskId t = w.add({.kind = ep ? TaskKind::kCollective : TaskKind::kCompute, .stream = stream,
                            .scope = ep ? Scope::kEp : Scope::kRank, .phase = phase,
                            .collective = ep ? std::optional(CollectiveKind::kAllToAll) : std::nullopt,
                            .layer = layer, .op = w.intern(name), .work = 1});
    names.push_back(name);
    return t;
  }
  std::vector<std::string> order(const std::vector<TaskId>& a, const std::vector<TaskId>& b) const {
    std::vector<std::string> got;
    for (const TaskId t : detail::interleave_modules(w, a, b)) got.push_back(names[t]);
    return got;
  }
};

// One MoE layer per pass, attention and MLP two compute ops each. Forward: attention, dispatch
// (two EP hops), MLP, combine (EP). Backward: combine gradient (EP), MLP backward, dispatch
// gradient (EP), attention backward. The backward issues first, a module at a time, so on the
// in-order streams:
//   EP:      B combine-grad,     F dispatch (2 hops), B dispatch-grad, F combine
//   compute: F attention (2 ops), B MLP (2 ops),      F MLP (2 ops),   B attention (2 ops)
// each all-to-all under the whole module of the other pass beside it. The op-by-op interleave
// (switch after each compute op) issued F qkv, B mlp 1, F proj, B mlp 2, ...: B mlp 1 waited for
// the combine gradient with only F qkv under it, and the in-order compute stream stalled there.
TEST(DualPipeModules, APairIssuesAWholeModuleUnderEachAllToAllOfTheOtherPass) {
  PairTasks p;
  const auto add = [&p](Stream stream, TaskPhase phase, const std::string& name) { return p.add(stream, phase, name); };
  const auto c = Stream::kCompute;
  const auto e = Stream::kEp;
  const auto f = TaskPhase::kForward;
  const auto b = TaskPhase::kBackward;
  const std::vector<TaskId> forward = {add(c, f, "F qkv"), add(c, f, "F proj"), add(e, f, "F dispatch 1"),
                                       add(e, f, "F dispatch 2"), add(c, f, "F mlp 1"), add(c, f, "F mlp 2"),
                                       add(e, f, "F combine")};
  const std::vector<TaskId> backward = {add(e, b, "B combine-grad"), add(c, b, "B mlp 1"), add(c, b, "B mlp 2"),
                                        add(e, b, "B dispatch-grad"), add(c, b, "B proj"), add(c, b, "B qkv")};
  const std::vector<std::string> expected = {"B combine-grad", "F qkv", "F proj", "F dispatch 1", "F dispatch 2",
                                             "B mlp 1", "B mlp 2", "B dispatch-grad", "F mlp 1", "F mlp 2",
                                             "F combine", "B proj", "B qkv"};
  EXPECT_EQ(p.order(forward, backward), expected);  // whichever the schedule lists first
  EXPECT_EQ(p.order(backward, forward), expected);
}

// A forward without all-to-alls (DeepSeek-V3's dense first stage) paired with an MoE backward: each
// dense layer is a module of its own, so the backward's second all-to-all runs under the second
// dense layer. As one module for the whole stretch, both dense layers went under the first
// all-to-all and the dispatch gradient had no compute of the other pass under it.
TEST(DualPipeModules, ADenseStretchIsOneModulePerLayer) {
  PairTasks p;
  const auto add = [&p](Stream stream, TaskPhase phase, std::uint32_t layer, const std::string& name) {
    return p.add(stream, phase, name, layer);
  };
  const auto c = Stream::kCompute;
  const auto e = Stream::kEp;
  const auto f = TaskPhase::kForward;
  const auto b = TaskPhase::kBackward;
  const std::vector<TaskId> forward = {add(c, f, 0, "F0 attn"), add(c, f, 0, "F0 mlp"), add(c, f, 1, "F1 attn"),
                                       add(c, f, 1, "F1 mlp")};
  const std::vector<TaskId> backward = {add(e, b, 5, "B combine-grad"), add(c, b, 5, "B mlp"),
                                        add(e, b, 5, "B dispatch-grad"), add(c, b, 5, "B attn")};
  const std::vector<std::string> expected = {"B combine-grad", "F0 attn", "F0 mlp", "B mlp", "B dispatch-grad",
                                             "F1 attn", "F1 mlp", "B attn"};
  EXPECT_EQ(p.order(forward, backward), expected);
}

}  // namespace
}  // namespace mofasim::executor
