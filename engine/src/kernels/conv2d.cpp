#include "z123/kernels/conv2d.hpp"

#include <string>

#include "kernels/gemm_dispatch.hpp"
#include "z123/error.hpp"

namespace z123::kernels {

std::vector<int64_t> conv2d_output_shape(const Tensor& x, const Tensor& w, const Conv2dParams& p) {
  if (x.shape.size() != 4) throw invalid_argument("conv2d: input " + x.describe() + " must be NHWC [B, H, W, Cin]");
  if (w.shape.size() != 4)
    throw invalid_argument("conv2d: weight " + w.describe() + " must be [Cout, kh, kw, Cin] (conv_weight_to_khwc)");
  if (w.dim(3) != x.dim(3))
    throw invalid_argument("conv2d: weight " + w.describe() + " takes " + std::to_string(w.dim(3)) +
                           " input channels, input " + x.describe() + " has " + std::to_string(x.dim(3)));
  if (p.stride < 1 || p.upsample < 1 || p.pad_top < 0 || p.pad_left < 0 || p.pad_bottom < 0 || p.pad_right < 0)
    throw invalid_argument("conv2d: stride " + std::to_string(p.stride) + ", upsample " + std::to_string(p.upsample) +
                           " must be >= 1 and padding >= 0");
  int64_t h = x.dim(1) * p.upsample + p.pad_top + p.pad_bottom;
  int64_t wd = x.dim(2) * p.upsample + p.pad_left + p.pad_right;
  if (x.dim(0) < 1 || h < w.dim(1) || wd < w.dim(2) || w.dim(1) < 1 || w.dim(2) < 1)
    throw invalid_argument("conv2d: kernel " + w.describe() + " does not fit input " + x.describe() +
                           " with this padding: the output would be empty");
  return {x.dim(0), (h - w.dim(1)) / p.stride + 1, (wd - w.dim(2)) / p.stride + 1, w.dim(0)};
}

void conv2d(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y,
            const Conv2dParams& params, Epilogue act, const Tensor* residual) {
  std::vector<int64_t> out = conv2d_output_shape(x, w, params);
  detail::GemmProblem p = detail::make_gemm_problem("conv2d", x, w, bias, y, act, residual, out);
  p.conv = true;
  auto u32 = [](int64_t v) { return static_cast<uint32_t>(v); };
  detail::GemmPush& g = p.geometry;
  g.M = u32(out[0] * out[1] * out[2]);
  g.N = u32(out[3]);
  g.K = u32(w.dim(1) * w.dim(2) * w.dim(3));
  g.H = u32(x.dim(1));
  g.W = u32(x.dim(2));
  g.Cin = u32(x.dim(3));
  g.Ho = u32(out[1]);
  g.Wo = u32(out[2]);
  g.KH = u32(w.dim(1));
  g.KW = u32(w.dim(2));
  g.stride = u32(params.stride);
  g.pad_top = u32(params.pad_top);
  g.pad_left = u32(params.pad_left);
  g.upsample = u32(params.upsample);
  detail::record_gemm(kernels, rec, "conv2d", p);
}

} // namespace z123::kernels
