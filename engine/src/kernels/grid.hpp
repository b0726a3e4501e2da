// Dispatch grids for kernels whose workgroup count can exceed the portable per-dimension limit
// (65535, the minimum Vulkan guarantees and lavapipe's value): the count is spread over x and y,
// and the shader rebuilds the linear index as gl_WorkGroupID.y * gl_NumWorkGroups.x +
// gl_WorkGroupID.x, skipping the few indices past the end.
#pragma once

#include <algorithm>
#include <cstdint>

namespace z123::kernels {

constexpr uint64_t kMaxGridDim = 65535;

struct Grid {
  uint32_t x = 1, y = 1;
};

inline Grid wrap_grid(uint64_t groups) {
  Grid g;
  g.x = static_cast<uint32_t>(std::max<uint64_t>(1, std::min(groups, kMaxGridDim)));
  g.y = static_cast<uint32_t>((groups + g.x - 1) / g.x);
  return g;
}

} // namespace z123::kernels
