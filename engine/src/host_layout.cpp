#include "z123/host_layout.hpp"

namespace z123 {

std::vector<float> nchw_to_nhwc(const std::vector<float>& v, int64_t b, int64_t c, int64_t h, int64_t w) {
  std::vector<float> r(v.size());
  for (int64_t n = 0; n < b; ++n)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) r[((n * h + y) * w + x) * c + ch] = v[((n * c + ch) * h + y) * w + x];
  return r;
}

std::vector<float> nhwc_to_nchw(const std::vector<float>& v, int64_t b, int64_t h, int64_t w, int64_t c) {
  std::vector<float> r(v.size());
  for (int64_t n = 0; n < b; ++n)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) r[((n * c + ch) * h + y) * w + x] = v[((n * h + y) * w + x) * c + ch];
  return r;
}

} // namespace z123
