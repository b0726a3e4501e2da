// Pointwise and data-movement kernels on token-major (NHWC) tensors: activations, broadcast
// arithmetic, the UNet's timestep embedding, nearest upsampling, channel concatenation, and the
// layout / dtype conversions at the pipeline boundary. All math is fp32; storage is F32 or F16.
// Every function records into rec (nothing runs until the recording is submitted) and throws
// InvalidArgument naming the op and the tensor on any shape or dtype mismatch.
#pragma once

#include "z123/kernels/kernels.hpp"
#include "z123/tensor.hpp"
#include "z123/vk/recording.hpp"

namespace z123::kernels {

// ---- activations: x and y have one shape and one dtype; y may be x (in place) --------------------

// y = x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), exact-erf GELU (not the tanh approximation). erf is
// evaluated through erfc with a Chebyshev fit of fractional error < 1.2e-7, so the result is good
// to a few fp32 ulps (well below fp16 rounding), including the small negative tail.
void gelu(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y);

// y = x * sigmoid(x).
void silu(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y);

// y = scale * x + shift (scalars), e.g. the latent / image scalings of the pipeline.
void scale_shift(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y, float scale, float shift);

// GEGLU of the transformer feed-forward: x [..., 2F] -> y [..., F],
// y[m, f] = x[m, f] * gelu(x[m, F + f]) (first half = value, second half = gate).
// x and y share one dtype; y must not alias x.
void geglu(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y);

// ---- binary ops with broadcast of b ----------------------------------------------------------------
// a and y have one shape; a, b and y one dtype; y may be a or b (in place). b is one of:
//   * a's shape                      (elementwise)
//   * [C], C = a's last dim          (per channel, e.g. a bias)
//   * [B, C] with a = [B, ..., C]    (per batch and channel: the resnet time-embedding add onto
//                                     [B, HW, C]; a must have rank >= 3)

// y = a + b
void add(Kernels& kernels, vk::Recording& rec, const Tensor& a, const Tensor& b, const Tensor& y);
// y = a * b
void mul(Kernels& kernels, vk::Recording& rec, const Tensor& a, const Tensor& b, const Tensor& y);
// y = alpha * a + beta * b  (classifier-free guidance, sampler updates, residual scaling)
void add_scaled(Kernels& kernels, vk::Recording& rec, const Tensor& a, const Tensor& b, const Tensor& y, float alpha,
                float beta);

// ---- UNet timestep embedding (spec §9.2) -------------------------------------------------------------
// y: [B, dim] (F32 or F16), dim even, half = dim / 2; every row gets the same float timestep t:
//   freq_k = exp(-ln(max_period) * k / (half - freq_shift)), arg_k = t * freq_k, k = 0..half-1
//   flip_sin_to_cos: y = [cos(arg), sin(arg)], else [sin(arg), cos(arg)].
// Computed like PyTorch's fp32 recipe (fp32 exponent and product, then sin/cos with an explicit
// range reduction, so large arguments such as 999 * freq stay accurate), then stored.
void timestep_embedding(Kernels& kernels, vk::Recording& rec, float t, const Tensor& y, bool flip_sin_to_cos = true,
                        float freq_shift = 0.0f, float max_period = 10000.0f);

// ---- data movement (x and y may have different dtypes: the copy converts) ------------------------------

// y = x converted to y's dtype (F32 <-> F16, or a plain copy). Same shape.
void cast(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y);

// x [B, C, H, W] -> y [B, H, W, C], and back. For images and latents at the pipeline boundary.
void nchw_to_nhwc(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y);
void nhwc_to_nchw(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y);

// Nearest-neighbour x2: x [B, H, W, C] -> y [B, 2H, 2W, C] (F.interpolate(scale_factor=2, "nearest")).
void upsample_nearest2x(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y);

// y[..., offset : offset + Cx] = x, other channels of y untouched.
// x: [B, HW, Cx] or [B, H, W, Cx]; y: x's shape with the last dim Cy >= offset + Cx.
void copy_channels(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y, int64_t offset);

// y = cat([a, b], channel dim) in NHWC: y[..., :Ca] = a, y[..., Ca:] = b (the UNet's skip concat
// cat([h, skip]): current hidden first). Two copy_channels calls.
void concat_channels(Kernels& kernels, vk::Recording& rec, const Tensor& a, const Tensor& b, const Tensor& y);

// ---- the pipeline's output ---------------------------------------------------------------------------

// The decoded image x [..., 3] (RGB, channels last, values around [-1/unscale, 1/unscale]) as 8-bit
// RGBA in rgba, one uint32 per pixel with the bytes R, G, B, A in memory order: each colour
// channel is round_half_even(clamp(x * unscale / 2 + 0.5, 0, 1) * 255), in fp32 with every
// operation rounded (what pipeline::decoded_to_rgba computes on the host), and alpha is 255. rgba
// is any buffer of at least 4 bytes per pixel, host-visible to be read back without a copy.
void image_to_rgba8(Kernels& kernels, vk::Recording& rec, const Tensor& x, const vk::Buffer& rgba, float unscale);

} // namespace z123::kernels
