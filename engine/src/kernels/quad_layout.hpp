// Reading the accumulator layout probe (shaders/coopmat_layout_probe.comp): per invocation of one
// 32-wide subgroup, its element count, then the row of each of its elements in a 16 x 16 fp32
// accumulator fragment. Kept apart from the dispatch so that tests can feed it layouts no device
// here has.
#pragma once

#include <cstdint>
#include <vector>

namespace z123::kernels {

struct QuadLayout {
  // Every invocation holds 8 elements, all in rows lane / 4 and lane / 4 + 8 (NVIDIA's tensor-core
  // layout, which the 16-subgroup attention assumes).
  bool rows_in_quads = false;
  // Where rows_in_quads and every invocation holds them in the same order: bit i set where element
  // i lies in row lane / 4 + 8 (the attention's specialization constant 0). 0 otherwise.
  uint32_t upmask = 0;
};

constexpr uint32_t kQuadProbeLanes = 32, kQuadProbePerLane = 16 * 16 / kQuadProbeLanes + 1;

// probe: kQuadProbeLanes x kQuadProbePerLane words, as the probe writes them.
QuadLayout read_quad_layout(const std::vector<uint32_t>& probe);

} // namespace z123::kernels
