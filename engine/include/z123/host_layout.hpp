// Host-side layout changes between PyTorch's NCHW (file formats, goldens, noise streams) and the
// engine's NHWC (everything on the device).
#pragma once

#include <cstdint>
#include <vector>

namespace z123 {

std::vector<float> nchw_to_nhwc(const std::vector<float>& v, int64_t b, int64_t c, int64_t h, int64_t w);
std::vector<float> nhwc_to_nchw(const std::vector<float>& v, int64_t b, int64_t h, int64_t w, int64_t c);

} // namespace z123
