// 2D convolution as an implicit GEMM on NHWC activations (no im2col buffer): the GEMM kernel of
// linear.hpp with an input loader that gathers the receptive field on the fly.
//   M = B * Ho * Wo (output pixels), N = Cout, K = kh * kw * Cin (ordered kh, kw, Cin).
#pragma once

#include <cstdint>
#include <vector>

#include "z123/kernels/kernels.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/tensor.hpp"
#include "z123/vk/recording.hpp"

namespace z123::kernels {

struct Conv2dParams {
  int stride = 1;
  // Zero padding per side. PyTorch's symmetric padding p: all four = p. The VAE encoder's
  // Downsample2D pads right/bottom by 1 then convolves with padding 0: top = left = 0,
  // bottom = right = 1.
  int pad_top = 1, pad_left = 1, pad_bottom = 1, pad_right = 1;
  // Nearest-neighbour upsampling of x by this factor, fused into the loader (Upsample2D followed
  // by its 3x3 conv reads the small tensor directly, the 4x larger one is never stored).
  // Padding and stride apply to the upsampled image.
  int upsample = 1;
};

// Same padding p on every side.
inline Conv2dParams conv_pad(int p, int stride = 1) { return Conv2dParams{stride, p, p, p, p, 1}; }

// y = act(conv(x, w) + bias) + residual
//
// x: NHWC [B, H, W, Cin]; w: kernel layout [Cout, kh, kw, Cin] (conv_weight_to_khwc of the
// checkpoint's [Cout, Cin, kh, kw]); bias: [Cout] or nullptr; y: NHWC [B, Ho, Wo, Cout] =
// conv2d_output_shape(x, w, p); residual: y's shape or nullptr (the resnet shortcut add).
// All tensors share one dtype; fp32 accumulation. Any Cin works (3 for RGB inputs); Cin % 4 == 0
// takes the vectorized loader. y must not alias any input. Throws InvalidArgument on shape, dtype
// or parameter errors (stride < 1, negative padding, empty output).
// Path: NV cooperative matrix when kernels.matmul_path() == Path::NvCoopMat and the dtype is F16,
// portable otherwise.
void conv2d(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y,
            const Conv2dParams& p, Epilogue act = Epilogue::None, const Tensor* residual = nullptr);

// [B, Ho, Wo, Cout] with Ho = (H * upsample + pad_top + pad_bottom - kh) / stride + 1 (same for W).
// Throws InvalidArgument when x or w is not 4-D, Cin differs, or the output would be empty.
std::vector<int64_t> conv2d_output_shape(const Tensor& x, const Tensor& w, const Conv2dParams& p);

// Host-side reorder of a checkpoint conv weight [Cout, Cin, kh, kw] (float32 values) to the
// kernel layout [Cout, kh, kw, Cin]. Throws InvalidArgument when oihw.size() != cout*cin*kh*kw.
std::vector<float> conv_weight_to_khwc(const std::vector<float>& oihw, int64_t cout, int64_t cin, int64_t kh,
                                       int64_t kw);

} // namespace z123::kernels
