#include "kernels/quad_layout.hpp"

namespace z123::kernels {

QuadLayout read_quad_layout(const std::vector<uint32_t>& probe) {
  QuadLayout layout;
  if (probe.size() != kQuadProbeLanes * kQuadProbePerLane) return layout;
  uint32_t first = 0;
  bool same_order = true;
  for (uint32_t lane = 0; lane < kQuadProbeLanes; ++lane) {
    const uint32_t* r = &probe[lane * kQuadProbePerLane];
    if (r[0] != kQuadProbePerLane - 1) return layout;
    uint32_t mask = 0;
    for (uint32_t i = 1; i < kQuadProbePerLane; ++i) {
      if (r[i] != lane / 4 && r[i] != lane / 4 + 8) return layout;
      if (r[i] == lane / 4 + 8) mask |= 1u << (i - 1);
    }
    if (lane == 0) first = mask;
    same_order = same_order && mask == first;
  }
  layout.rows_in_quads = true;
  layout.upmask = same_order ? first : 0;
  return layout;
}

} // namespace z123::kernels
