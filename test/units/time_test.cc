#include "sim/units/time.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "sim/units/quantities.h"

namespace mofasim {
namespace {

template <class A, class B>
concept Addable = requires(A a, B b) { a + b; };
static_assert(!Addable<Time, Time>, "two instants must not add");
static_assert(Addable<Time, Duration>);
static_assert(!Addable<Bytes, Flops>, "bytes and FLOPs must not mix");

TEST(FromSeconds, RoundsToNearestNanosecond) {
  EXPECT_EQ(from_seconds(1.5e-9).count(), 2);   // 1.5 ns rounds half to even -> 2
  EXPECT_EQ(from_seconds(2.4e-9).count(), 2);
  EXPECT_EQ(from_seconds(0.001).count(), 1'000'000);
  EXPECT_EQ(from_seconds(0).count(), 0);
}

TEST(FromSeconds, RejectsNaNNegativeAndOverflow) {
  EXPECT_THROW(from_seconds(std::nan("")), std::domain_error);
  EXPECT_THROW(from_seconds(-1e-9), std::domain_error);
  EXPECT_THROW(from_seconds(1e12), std::domain_error);  // ~31,700 years: beyond int64 ns
  EXPECT_THROW(from_seconds(std::numeric_limits<double>::infinity()), std::domain_error);
}

TEST(ToSeconds, RoundTripsThroughNanoseconds) {
  EXPECT_DOUBLE_EQ(to_seconds(from_seconds(27.83)), 27.83);
  EXPECT_DOUBLE_EQ(to_seconds(at_ns(5) + Duration{7}), 12e-9);
}

TEST(TransferSeconds, DividesSizeByBandwidth) {
  // 1 GiB at 370 GB/s = 2^30 / 370e9 s.
  EXPECT_DOUBLE_EQ(transfer_seconds(Bytes{1073741824.0}, Bandwidth{370e9}), 1073741824.0 / 370e9);
}

}  // namespace
}  // namespace mofasim
