// Reading the accumulator layout probe (shaders/coopmat_layout_probe.comp): per invocation of one
// 32-wide subgroup, its element count, then the row of each of its elements in a 16 x 16 fp32
// accumulator fragment. Kept apart from the dispatch so that tests can feed it layouts no device
// here has.
#pragma once

#include <cstdint>
#include <vector>

#include "z123/kernels/kernels.hpp" // QuadLayout

namespace z123::kernels {

constexpr uint32_t kQuadProbeLanes = 32, kQuadProbePerLane = 16 * 16 / kQuadProbeLanes + 1;

// probe: kQuadProbeLanes x kQuadProbePerLane words, as the probe writes them.
QuadLayout read_quad_layout(const std::vector<uint32_t>& probe);

} // namespace z123::kernels
