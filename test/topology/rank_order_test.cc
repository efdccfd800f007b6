// Rank-order strings under Megatron's rules (megatron/core/parallel_state.py): RankGenerator
// lower-cases the order, refuses to leave out a dimension of size > 1, appends the left-out ones
// of size 1 and fails on an unknown name; initialize_model_parallel builds a dense generator
// (tp, ep = 1, dp, pp, cp) and an expert one (etp, ep, edp, pp, cp = 1) from the same order.
// megatron_accepts() restates those rules on the text so the tests compare RankOrder::parse +
// check_order_for_sizes against them string by string; repeats are the one deliberate difference.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "topology/placement.h"
#include "topology/rank_order.h"

namespace mofasim::topology {
namespace {

using ::testing::ElementsAre;

// RankGenerator.__init__ for one generator's sizes: the names' substring test, then the tokens.
bool generator_accepts(std::string order, const std::map<std::string, int>& sizes) {
  std::transform(order.begin(), order.end(), order.begin(), [](unsigned char ch) { return std::tolower(ch); });
  for (const char* name : {"tp", "pp", "dp", "ep", "cp"}) {
    if (order.find(name) == std::string::npos) {
      if (sizes.at(name) != 1) return false;  // RuntimeError: size > 1 but not in the order
      order += std::string("-") + name;
    }
  }
  std::size_t start = 0;
  for (;;) {
    const std::size_t dash = order.find('-', start);
    if (sizes.count(order.substr(start, dash == std::string::npos ? std::string::npos : dash - start)) == 0) {
      return false;  // KeyError
    }
    if (dash == std::string::npos) return true;
    start = dash + 1;
  }
}

bool megatron_accepts(const std::string& order, const ParallelSizes& s) {
  return generator_accepts(order, {{"tp", s.tp}, {"pp", s.pp}, {"dp", s.dp}, {"ep", 1}, {"cp", s.cp}}) &&
         generator_accepts(order, {{"tp", s.expert_tp()}, {"pp", s.pp}, {"dp", s.expert_dp()}, {"ep", s.ep}, {"cp", 1}});
}

std::string mofasim_error(const std::string& order, const ParallelSizes& sizes) {
  try {
    check_order_for_sizes(sizes, RankOrder::parse(order));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(RankOrderMegatronRule, AgreesWithRankGeneratorStringByString) {
  const std::vector<ParallelSizes> layouts = {
      {.tp = 2, .cp = 1, .ep = 1, .dp = 2, .pp = 2},  // cp = ep = 1
      {.tp = 2, .cp = 2, .ep = 1, .dp = 2, .pp = 1},  // pp = 1
      {.tp = 1, .cp = 1, .ep = 2, .dp = 4, .pp = 1},  // MoE, tp = 1
      {.tp = 2, .cp = 1, .ep = 1, .dp = 1, .pp = 4},  // dp = 1
  };
  const std::vector<std::string> orders = {
      "tp-cp-ep-dp-pp", "tp-cp-ep-pp-dp", "tp-dp-pp", "tp-pp-dp", "tp-cp-dp", "tp-ep-dp", "dp-tp",
      "pp", "tp", "TP-DP-PP", "Tp-Cp-Ep-Dp-Pp", "tp-xp-dp-pp", "tp--dp-pp", "", "tp-dp-pp-", "tp dp pp"};
  int accepted = 0;
  for (const ParallelSizes& sizes : layouts) {
    for (const std::string& order : orders) {
      const bool ok = mofasim_error(order, sizes).empty();
      EXPECT_EQ(ok, megatron_accepts(order, sizes))
          << "'" << order << "' at tp " << sizes.tp << " cp " << sizes.cp << " ep " << sizes.ep << " dp " << sizes.dp
          << " pp " << sizes.pp << ": " << mofasim_error(order, sizes);
      accepted += ok ? 1 : 0;
    }
  }
  // Hand count: the three five-name orders fit all 4 layouts (12); tp-dp-pp, tp-pp-dp and
  // TP-DP-PP leave out cp and ep, so they fit layouts 1 and 4 (6); tp-cp-dp leaves out ep and pp
  // and fits layout 2; tp-ep-dp leaves out cp and pp and fits layout 3; dp-tp, pp and tp leave out
  // a dimension of size > 1 everywhere; the last five strings have an unknown or empty name.
  EXPECT_EQ(accepted, 12 + 6 + 1 + 1);
}

TEST(RankOrderMegatronRule, LeftOutDimensionsOfSizeOneAreAppended) {
  // Megatron's docstring example: order tp-pp-dp with sizes 2-2-2 gives the DP groups [0, 4],
  // [1, 5], [2, 6], [3, 7]; cp and ep (size 1) are appended.
  const ParallelSizes sizes{.tp = 2, .cp = 1, .ep = 1, .dp = 2, .pp = 2};
  const RankOrder order = RankOrder::parse("tp-pp-dp");
  EXPECT_THAT(order.dims(), ElementsAre(ParallelDim::kTp, ParallelDim::kPp, ParallelDim::kDp, ParallelDim::kEp,
                                        ParallelDim::kCp));
  EXPECT_TRUE(order.names(ParallelDim::kDp));
  EXPECT_FALSE(order.names(ParallelDim::kCp));
  EXPECT_EQ(order.to_string(), "tp-pp-dp");
  EXPECT_THAT(group_members_of(sizes, order, GroupKind::kDp, 0), ElementsAre(0, 4));
  EXPECT_THAT(group_members_of(sizes, order, GroupKind::kDp, 3), ElementsAre(3, 7));
  EXPECT_THAT(group_members_of(sizes, order, GroupKind::kPp, 1), ElementsAre(1, 3));
  // tp-dp-pp is the default order with cp and ep of size 1: the same groups.
  for (GroupKind k : {GroupKind::kTp, GroupKind::kDp, GroupKind::kPp, GroupKind::kCp}) {
    EXPECT_EQ(group_members_of(sizes, RankOrder::parse("tp-dp-pp"), k, 5), group_members_of(sizes, RankOrder(), k, 5));
  }
}

TEST(RankOrderMegatronRule, RefusalsAreOneLineEach) {
  EXPECT_EQ(mofasim_error("tp-dp-pp", {.tp = 2, .cp = 2, .ep = 1, .dp = 1, .pp = 2}),
            "parallelism.rank_order: 'tp-dp-pp' leaves out cp, whose size is 2; Megatron appends only the dimensions "
            "of size 1 an order leaves out");
  // ep lives in the expert generator only: ep 2 must be named even though the dense one has ep 1.
  EXPECT_EQ(mofasim_error("tp-cp-dp-pp", {.tp = 1, .cp = 1, .ep = 2, .dp = 4, .pp = 1}),
            "parallelism.rank_order: 'tp-cp-dp-pp' leaves out ep, whose size is 2; Megatron appends only the "
            "dimensions of size 1 an order leaves out");
  EXPECT_EQ(mofasim_error("tp-xp-dp-pp", {}),
            "parallelism.rank_order: 'tp-xp-dp-pp' has unknown name 'xp' (expected names from tp, cp, ep, dp, pp "
            "joined by '-', each at most once, e.g. 'tp-cp-ep-dp-pp')");
  EXPECT_THAT(mofasim_error("tp--dp", {}), ::testing::HasSubstr("'tp--dp' has an empty name"));
  // Repeats: refused even where RankGenerator would not notice (a repeated name of size 1).
  EXPECT_THAT(mofasim_error("tp-cp-ep-dp-pp-tp", {}), ::testing::HasSubstr("names 'tp' twice"));
  EXPECT_THAT(mofasim_error("TP-tp", {}), ::testing::HasSubstr("names 'tp' twice"));
}

TEST(RankOrderMegatronRule, PpLastIsTheTextAsWritten) {
  // Megatron tests order.endswith("pp") on the text: tp-cp-ep-dp-pp ends in pp; tp-cp-ep-pp-dp and
  // a left-out-pp order do not. With pp 2, ep 2, etp 1 on tp 2, dp 2: edp = 2*2/2 = 2 = dp, so the
  // non-pp-last orders pass the size rule; with tp 1, dp 4, ep 2: edp 2 != dp 4 refuses them.
  EXPECT_TRUE(RankOrder::parse("tp-dp-pp").ends_in_pp());
  EXPECT_FALSE(RankOrder::parse("tp-cp-ep-pp-dp").ends_in_pp());
  EXPECT_EQ(mofasim_error("tp-ep-dp-pp", {.tp = 1, .cp = 1, .ep = 2, .dp = 4, .pp = 2}), "");
  EXPECT_THAT(mofasim_error("tp-ep-pp-dp", {.tp = 1, .cp = 1, .ep = 2, .dp = 4, .pp = 2}),
              ::testing::HasSubstr("does not end in pp"));
}

}  // namespace
}  // namespace mofasim::topology
