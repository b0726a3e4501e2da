// Reading the accumulator layout probe (kernels::read_quad_layout), on layouts written here: the
// one the probe finds on NVIDIA GPUs, others a device might have, and malformed outputs. No device
// needed; the probe itself runs in AttentionKhrCoopMat.LayoutProbeAndTheVariantItAllows.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/quad_layout.hpp"

using z123::kernels::kQuadProbeLanes;
using z123::kernels::kQuadProbePerLane;
using z123::kernels::QuadLayout;
using z123::kernels::read_quad_layout;

namespace {

// A probe output where element i of invocation `lane` lies in row row(lane, i).
std::vector<uint32_t> probe_output(const std::function<uint32_t(uint32_t, uint32_t)>& row) {
  std::vector<uint32_t> out(kQuadProbeLanes * kQuadProbePerLane);
  for (uint32_t lane = 0; lane < kQuadProbeLanes; ++lane) {
    out[lane * kQuadProbePerLane] = kQuadProbePerLane - 1;
    for (uint32_t i = 0; i + 1 < kQuadProbePerLane; ++i) out[lane * kQuadProbePerLane + 1 + i] = row(lane, i);
  }
  return out;
}

} // namespace

// Elements 4-7 in row g + 8 on every invocation, g = lane / 4: what an H200 reports (session 28).
TEST(QuadLayout, OneOrderOnEveryInvocation) {
  const QuadLayout l =
      read_quad_layout(probe_output([](uint32_t lane, uint32_t i) { return lane / 4 + (i >= 4 ? 8 : 0); }));
  EXPECT_TRUE(l.rows_in_quads);
  EXPECT_EQ(l.upmask, 0xf0u);
  // Rows alternating in pairs: another order, also one for all.
  const QuadLayout pairs =
      read_quad_layout(probe_output([](uint32_t lane, uint32_t i) { return lane / 4 + ((i >> 1) & 1u ? 8 : 0); }));
  EXPECT_TRUE(pairs.rows_in_quads);
  EXPECT_EQ(pairs.upmask, 0xccu);
}

// Quads, but the order differs between invocations: the 16-subgroup attention still runs (it learns
// each invocation's mask at run time), with no constant.
TEST(QuadLayout, OrderDiffersBetweenInvocations) {
  const QuadLayout l = read_quad_layout(probe_output([](uint32_t lane, uint32_t i) {
    const bool upper = lane % 2 == 0 ? i >= 4 : i < 4;
    return lane / 4 + (upper ? 8 : 0);
  }));
  EXPECT_TRUE(l.rows_in_quads);
  EXPECT_EQ(l.upmask, 0u);
}

// Not the quad layout: rows outside lane / 4 and lane / 4 + 8, a count other than 8, a short output.
TEST(QuadLayout, OtherLayouts) {
  const QuadLayout rows_by_element = read_quad_layout(probe_output([](uint32_t, uint32_t i) { return 2 * i; }));
  EXPECT_FALSE(rows_by_element.rows_in_quads);
  EXPECT_EQ(rows_by_element.upmask, 0u);
  std::vector<uint32_t> count = probe_output([](uint32_t lane, uint32_t i) { return lane / 4 + (i >= 4 ? 8 : 0); });
  count[5 * kQuadProbePerLane] = 16; // one invocation holding 16 elements
  EXPECT_FALSE(read_quad_layout(count).rows_in_quads);
  EXPECT_FALSE(read_quad_layout(std::vector<uint32_t>(kQuadProbePerLane, 8)).rows_in_quads);
}
