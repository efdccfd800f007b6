// The closed-form overlaps (MoFa(20), MoFa(24)) with the overlap-interference alpha of an H100
// (132 SMs, 24 held by the collective: α = 132/108), hand-worked.
#include <gtest/gtest.h>

#include "model/analytic_overlap.h"
#include "model/interference.h"

namespace mofasim::model {
namespace {

HardwareSpec with_sms(int sms, int taken) {
  HardwareSpec hw{.collective_sms = taken};
  hw.kernels.sm_count = sms;
  return hw;
}
HardwareSpec h100() { return with_sms(132, 24); }

TEST(AnalyticInterference, AlphaFromSmsTakenByTheCollective) {
  EXPECT_DOUBLE_EQ(overlap_interference_alpha(h100()), 132.0 / 108.0);  // 1.2222
  EXPECT_DOUBLE_EQ(overlap_interference_alpha(with_sms(108, 24)), 108.0 / 84.0);  // A100
  EXPECT_DOUBLE_EQ(overlap_interference_alpha(h100(), false), 1.0);
  EXPECT_DOUBLE_EQ(overlap_interference_alpha({}), 1.0);
}

TEST(AnalyticInterference, TpOverlapPaysTheSlowedCompute) {
  // MoFa(20), X = 8, C = 4, s = 4: each middle window runs 2 s of compute beside a 1 s piece that
  // holds 24 SMs: 2 + 1·(1 − 108/132) = 2.1818; 2 + 1 + 3·2.1818 = 9.5455 (9 when overlap is free).
  const double alpha = overlap_interference_alpha(h100());
  EXPECT_NEAR(tp_overlap_seconds(8, 4, 4, alpha, 1), 3 + 3 * (2 + (1 - 108.0 / 132.0)), 1e-12);
}

TEST(AnalyticInterference, DpOverlapExposesTheSlowdownOfTheHidingCompute) {
  // MoFa(24), v = 4 chunks of c = 1 under W = 2: each hidden chunk costs its window minus W,
  // 1·(1 − 108/132) = 0.1818; exposed 1 + 3·0.1818 = 1.5455.
  const double alpha = overlap_interference_alpha(h100());
  EXPECT_NEAR(dp_overlap_exposed_seconds(1, 2, 4, alpha, 1), 1 + 3 * (1 - 108.0 / 132.0), 1e-12);
}

}  // namespace
}  // namespace mofasim::model
