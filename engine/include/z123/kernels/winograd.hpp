// 3x3 convolutions (stride 1, padding 1) by Winograd's F(2x2, 3x3) algorithm: each 2 x 2 block of
// outputs (a tile) comes from 16 elementwise products of the transformed 4 x 4 input patch around
// it with the transformed kernel, which summed over the input channels are 16 GEMMs: 2.25 times
// fewer multiplies than the direct conv's 9 taps, for two memory-bound transforms whose
// intermediates hold 4 times the input and the output (shaders/winograd.comp says how).
//   conv2d_winograd = winograd_input (x -> V) + linear_grouped (V, U -> M) + winograd_output (M -> y)
// Where it pays is the caller's choice (nets: Tuning::conv_winograd; bench/NOTES.md session 22).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "z123/kernels/kernels.hpp"
#include "z123/tensor.hpp"
#include "z123/vk/recording.hpp"

namespace z123::kernels {

// The elementwise products per tile (a 4 x 4 transformed patch), and so the GEMMs in one
// Winograd conv: the weight's middle dim and the scratch tensors' row groups.
constexpr int64_t kWinogradProducts = 16;

// The tiling of one conv: x [B, H, W, Cin] read through nearest upsampling by `upsample`, so the
// output is [B, Ho, Wo, Cout] with Ho = H * upsample, Wo = W * upsample; th x tw tiles of 2 x 2
// per image, `tiles` in all, and `rows` >= tiles (a multiple of linear_group_row_align() for
// Cout: the grouped GEMM's row tiles) per product in the scratch tensors V [16 * rows, Cin] and
// M [16 * rows, Cout].
struct WinogradTiling {
  int64_t B = 0, Ho = 0, Wo = 0, th = 0, tw = 0, tiles = 0, rows = 0;
};
// Throws InvalidArgument unless x is 4-D with a positive size and upsample is 1 or 2.
WinogradTiling winograd_tiling(const Kernels& kernels, const Tensor& x, int upsample, int64_t cout);

// Whether conv2d_winograd runs a conv of these channel counts and dtype here: channel counts
// multiples of 4 (vector access) and a GEMM route with grouped weights (linear_grouped_runs).
bool winograd_runs(const Kernels& kernels, DType dtype, int64_t cin, int64_t cout);

// Whether Tuning::conv_winograd sends such a conv to the Winograd route here: auto where the
// GEMMs take the tiled portable kernel (GPUs without usable matrix units; measured in
// bench/NOTES.md session 22) or the KHR cooperative-matrix kernels (sessions 29-30); on wherever
// winograd_runs; off never; Tuning::conv_winograd_max_cout caps the output channels. The memory
// layout is the caller's part of the choice.
bool winograd_chosen(const Kernels& kernels, DType dtype, int64_t cin, int64_t cout);

// In words, how the UNet's 3x3 convs run here (what zero123pp-devices prints).
std::string unet_conv3x3_route(const Kernels& kernels, DType dtype);

// x [B, H, W, Cin] -> v [16 * rows, Cin] with rows >= the tiles (winograd_tiling); zeros past them.
// A group norm (and SiLU) in front of the conv, applied as the input transform reads x: table is
// group_norm_table's output for x (fp32, [B, 2, C] first), so the norm's output never goes
// through memory. The padding stays zero, as it was around the norm's output.
struct WinogradNorm {
  const Tensor* table = nullptr;
  bool silu = false;
};

// norm: optional (nullptr: x as it is).
void winograd_input(Kernels& kernels, vk::Recording& rec, const Tensor& x, int upsample, const Tensor& v,
                    const WinogradNorm* norm = nullptr);
// m [16 * rows, Cout] -> y [B, Ho, Wo, Cout] = the tiles' outputs + bias [Cout] + residual (y's
// shape), either optional; rows = m.dim(0) / 16 >= the tiles of y.
void winograd_output(Kernels& kernels, vk::Recording& rec, const Tensor& m, const Tensor* bias, const Tensor* residual,
                     const Tensor& y);

// y = conv3x3(upsample(norm(x)), w, padding 1) + bias + residual, with the weight in Winograd form
// u [Cout, 16, Cin] (conv_weight_to_winograd) and two scratch tensors of the conv's dtype:
// v [16 * rows, Cin] and m [16 * rows, Cout] (winograd_tiling); norm optional (winograd_input).
// Throws InvalidArgument on shape or dtype errors, Unsupported where !winograd_runs.
void conv2d_winograd(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& u, const Tensor* bias,
                     const Tensor& y, int upsample, const Tensor* residual, const Tensor& v, const Tensor& m,
                     const WinogradNorm* norm = nullptr);

// Host-side transform of a checkpoint 3x3 conv weight [Cout, Cin, 3, 3] (float32 values) to the
// Winograd form [Cout, 16, Cin]: U = G g Gᵀ per (output, input) channel pair, in double
// precision, rounded once. Throws InvalidArgument when oihw.size() != cout * cin * 9.
std::vector<float> conv_weight_to_winograd(const std::vector<float>& oihw, int64_t cout, int64_t cin);
// The same for one output channel: `taps` holds its [Cin, 3, 3] values, `out` receives [16, Cin].
void winograd_weight_row(const float* taps, int64_t cin, float* out);

} // namespace z123::kernels
