// Checkpoint conv weights are [Cout, Cin, kh, kw]; the implicit-GEMM kernel reads K in the order
// (ky, kx, ci) so that one tap's channels are contiguous in both the NHWC input and the weight.
#include <string>

#include "z123/error.hpp"
#include "z123/kernels/conv2d.hpp"

namespace z123::kernels {

std::vector<float> conv_weight_to_khwc(const std::vector<float>& oihw, int64_t cout, int64_t cin, int64_t kh,
                                       int64_t kw) {
  if (cout < 0 || cin < 0 || kh < 0 || kw < 0 || static_cast<int64_t>(oihw.size()) != cout * cin * kh * kw)
    throw invalid_argument("conv_weight_to_khwc: " + std::to_string(oihw.size()) + " values do not form [" +
                           std::to_string(cout) + ", " + std::to_string(cin) + ", " + std::to_string(kh) + ", " +
                           std::to_string(kw) + "]");
  std::vector<float> out(oihw.size());
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t i = 0; i < cin; ++i)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x)
          out[((o * kh + y) * kw + x) * cin + i] = oihw[((o * cin + i) * kh + y) * kw + x];
  return out;
}

} // namespace z123::kernels
