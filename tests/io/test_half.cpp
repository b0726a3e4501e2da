// float32 <-> float16 conversions (z123/half.hpp, used by the weight loader): exhaustive over all
// 65536 half patterns and every rounding midpoint, since converting fp32 weights must match
// PyTorch's .half() bit for bit.
#include "z123/half.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace {

using z123::f16_to_f32;
using z123::f32_to_f16;

TEST(HalfTest, KnownValues) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);  // largest finite half
  EXPECT_EQ(f32_to_f16(65519.99f), 0x7bff); // just below the rounding boundary
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // tie rounds to even = inf
  EXPECT_EQ(f32_to_f16(1e10f), 0x7c00);
  EXPECT_EQ(f32_to_f16(-1e10f), 0xfc00);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000); // tie between 0 and 2^-24 -> even
  EXPECT_EQ(f32_to_f16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(f32_to_f16(1e-10f), 0x0000);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::denorm_min()), 0x0000);
  const std::uint16_t nan = f32_to_f16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_EQ(f16_to_f32(0x3555), 0.333251953125f);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x03ff), std::ldexp(1023.0f, -24)); // largest subnormal
}

TEST(HalfTest, EveryHalfRoundTripsExactly) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_to_f32(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) {
      const std::uint16_t back = f32_to_f16(f);
      EXPECT_EQ(back & 0x7c00, 0x7c00) << h;
      EXPECT_NE(back & 0x03ff, 0) << h;
      continue;
    }
    ASSERT_EQ(f32_to_f16(f), h) << "half 0x" << std::hex << h;
  }
}

// Between each pair of neighbouring finite halves: the exact midpoint goes to the even one, the
// floats just either side of it go to the nearer one.
TEST(HalfTest, EveryMidpointRoundsToNearestEven) {
  for (std::uint32_t sign : {0u, 0x8000u}) {
    for (std::uint32_t h = 0; h < 0x7bff; ++h) {
      const auto lo = static_cast<std::uint16_t>(sign | h);
      const auto hi = static_cast<std::uint16_t>(sign | (h + 1));
      const double mid_d = (static_cast<double>(f16_to_f32(lo)) + f16_to_f32(hi)) / 2.0;
      const auto mid = static_cast<float>(mid_d);
      ASSERT_EQ(static_cast<double>(mid), mid_d); // 12 significant bits: exact in float
      const std::uint16_t even = (lo & 1u) == 0 ? lo : hi;
      ASSERT_EQ(f32_to_f16(mid), even) << "midpoint after 0x" << std::hex << lo;
      const float toward_zero = std::nextafter(mid, 0.0f);
      const float away = std::nextafter(mid, sign ? -INFINITY : INFINITY);
      ASSERT_EQ(f32_to_f16(toward_zero), lo) << "below midpoint after 0x" << std::hex << lo;
      ASSERT_EQ(f32_to_f16(away), hi) << "above midpoint after 0x" << std::hex << lo;
    }
  }
}

} // namespace
