#include "z123/kernels/winograd.hpp"

#include <string>

#include "kernels/gemm_dispatch.hpp"
#include "kernels/grid.hpp"
#include "kernels/shader_names.hpp"
#include "z123/error.hpp"
#include "z123/kernels/linear.hpp"

namespace z123::kernels {
namespace {

constexpr int kTaps = 3;
constexpr int64_t kProducts = kWinogradProducts;
constexpr uint32_t kThreads = 256; // local_size_x of shaders/winograd.comp
// Mirror the push blocks of shaders/winograd.comp.
struct InputPush {
  uint32_t B, H, W, CV, up, th, tw, rows, norm;
};
struct OutputPush {
  uint32_t B, Ho, Wo, NV, th, tw, rows, flags;
};

// The input (or output) transform's pipeline for `vec` channels per invocation
// (Tuning::winograd_input_vec, winograd_output_vec; 4 or 2, both divide the channels: check_image).
std::string transform_variant(bool input, int vec, DType dtype) {
  if (input) return vec == 2 ? variant("winograd_input_v2", dtype) : variant("winograd_input", dtype);
  return vec == 2 ? variant("winograd_output_v2", dtype) : variant("winograd_output", dtype);
}

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

void check_upsample(const char* op, int upsample) {
  if (upsample != 1 && upsample != 2)
    throw invalid_argument(std::string(op) + ": upsampling by " + std::to_string(upsample) + " (1 or 2 supported)");
}

// The tiles of an output [B, Ho, Wo, *] (rows left 0).
WinogradTiling tiles_of(int64_t B, int64_t Ho, int64_t Wo) {
  WinogradTiling t;
  t.B = B;
  t.Ho = Ho;
  t.Wo = Wo;
  t.th = (Ho + 1) / 2;
  t.tw = (Wo + 1) / 2;
  t.tiles = B * t.th * t.tw;
  return t;
}

void check_image(const char* op, const char* what, const Tensor& t) {
  if (t.shape.size() != 4 || t.numel() == 0)
    throw invalid_argument(std::string(op) + ": " + what + " " + t.describe() +
                           " must be NHWC [B, H, W, C], not empty");
  if (t.dim(3) % 4 != 0)
    throw invalid_argument(std::string(op) + ": " + t.describe() + ": channels not a multiple of 4");
}

// rows of a scratch tensor [16 * rows, C] that must hold `tiles` rows per product.
int64_t scratch_rows(const char* op, const Tensor& s, int64_t tiles, int64_t C) {
  if (s.shape.size() != 2 || s.dim(1) != C || s.dim(0) % kProducts != 0 || s.dim(0) / kProducts < tiles)
    throw invalid_argument(std::string(op) + ": " + s.describe() + " must be [16 * rows, " + std::to_string(C) +
                           "] with rows >= " + std::to_string(tiles) + " tiles");
  return s.dim(0) / kProducts;
}

} // namespace

WinogradTiling winograd_tiling(const Kernels& kernels, const Tensor& x, int upsample, int64_t cout) {
  check_image("winograd", "input", x);
  check_upsample("winograd", upsample);
  WinogradTiling t = tiles_of(x.dim(0), x.dim(1) * upsample, x.dim(2) * upsample);
  const int64_t align = linear_group_row_align(kernels, x.dtype, cout);
  t.rows = (t.tiles + align - 1) / align * align;
  return t;
}

bool winograd_runs(const Kernels& kernels, DType dtype, int64_t cin, int64_t cout) {
  return cin > 0 && cout > 0 && cin % 4 == 0 && cout % 4 == 0 && linear_grouped_runs(kernels, dtype, cout);
}

bool winograd_chosen(const Kernels& kernels, DType dtype, int64_t cin, int64_t cout) {
  using CW = Tuning::ConvWinograd;
  const CW mode = kernels.tuning().conv_winograd;
  if (mode == CW::Off || !winograd_runs(kernels, dtype, cin, cout)) return false;
  const int64_t max_cout = kernels.tuning().conv_winograd_max_cout;
  if (max_cout != 0 && cout > max_cout) return false;
  if (mode == CW::On || detail::gemm_uses_tiled_portable(kernels, dtype, static_cast<uint32_t>(cout), false))
    return true;
  // On the KHR cooperative-matrix GEMMs every level that takes it: on an H200 (bench/NOTES.md
  // session 29, run 1) 30.5 ms per step against 35.4 without, 34.2 at level 0 alone. Its weights
  // are 16/9 the size (+402 MiB); the engine's memory turns (session 30) keep the peak at
  // 3,426 MiB, within the project's 3.5 GiB.
  return kernels.matmul_path() == Path::KhrCoopMat && detail::gemm_uses_coopmat(kernels, dtype);
}

std::string unet_conv3x3_route(const Kernels& kernels, DType dtype) {
  // 320 channels: the UNet's narrowest convs, on the route its wider ones take too.
  return winograd_chosen(kernels, dtype, 320, 320)
             ? "Winograd F(2x2, 3x3) where the UNet takes it (grouped GEMMs; Z123_CONV_WINOGRAD in docs/tuning.md), "
               "else as linear"
             : "as linear (implicit GEMM)";
}

void winograd_input(Kernels& kernels, vk::Recording& rec, const Tensor& x, int upsample, const Tensor& v,
                    const WinogradNorm* norm) {
  const char* op = "winograd_input";
  check_image(op, "x", x);
  check_upsample(op, upsample);
  const WinogradTiling t = tiles_of(x.dim(0), x.dim(1) * upsample, x.dim(2) * upsample);
  const int64_t C = x.dim(3), rows = scratch_rows(op, v, t.tiles, C);
  expect_same_dtype(op, x, v);
  expect_no_alias(op, v, x);
  expect_indexable(op, v);
  const Tensor* table = norm ? norm->table : nullptr;
  if (norm && (!table || table->dtype != DType::F32 || table->numel() < 2 * x.dim(0) * C))
    throw invalid_argument(std::string(op) + ": the norm's table " + (table ? table->describe() : "(none)") +
                           " must be f32 with at least [B, 2, C] = " + std::to_string(2 * x.dim(0) * C) +
                           " values (group_norm_table)");
  if (table) expect_no_alias(op, v, *table);
  const int vec = kernels.tuning().winograd_input_vec;
  InputPush p{u32(t.B),     u32(x.dim(1)), u32(x.dim(2)),
              u32(C / vec), u32(upsample), u32(t.th),
              u32(t.tw),    u32(rows),     norm ? (norm->silu ? 2u : 1u) : 0u};
  const vk::Pipeline& pipe = kernels.pipeline(transform_variant(true, vec, x.dtype), 3, sizeof p, {});
  Grid g = wrap_grid(div_up(rows * (C / vec), int64_t{kThreads}));
  rec.dispatch(pipe, {vk::in(x.buf()), vk::out(v.buf()), vk::in(table ? table->buf() : x.buf())}, &p, sizeof p, g.x,
               g.y, 1,
               shape_string(x.shape) + (upsample > 1 ? " up " + std::to_string(upsample) : "") +
                   (norm ? (norm->silu ? "+norm+silu" : "+norm") : ""));
}

void winograd_output(Kernels& kernels, vk::Recording& rec, const Tensor& m, const Tensor* bias, const Tensor* residual,
                     const Tensor& y) {
  const char* op = "winograd_output";
  check_image(op, "y", y);
  const int64_t N = y.dim(3);
  const WinogradTiling t = tiles_of(y.dim(0), y.dim(1), y.dim(2));
  const int64_t rows = scratch_rows(op, m, t.tiles, N);
  if (bias) expect_shape(op, "bias", *bias, {N});
  if (residual) expect_shape(op, "residual", *residual, y.shape);
  for (const Tensor* in : {&m, bias, residual})
    if (in) {
      expect_same_dtype(op, *in, y);
      expect_no_alias(op, y, *in);
    }
  expect_indexable(op, m);
  const int vec = kernels.tuning().winograd_output_vec;
  OutputPush p{u32(t.B),  u32(t.Ho), u32(t.Wo), u32(N / vec),
               u32(t.th), u32(t.tw), u32(rows), (bias ? 1u : 0u) | (residual ? 2u : 0u)};
  const vk::Pipeline& pipe = kernels.pipeline(transform_variant(false, vec, y.dtype), 4, sizeof p, {});
  Grid g = wrap_grid(div_up(t.tiles * (N / vec), int64_t{kThreads}));
  rec.dispatch(pipe,
               {vk::in(m.buf()), vk::in(bias ? bias->buf() : m.buf()), vk::in(residual ? residual->buf() : m.buf()),
                vk::out(y.buf())},
               &p, sizeof p, g.x, g.y, 1, shape_string(y.shape) + (bias ? "+bias" : "") + (residual ? "+res" : ""));
}

void conv2d_winograd(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& u, const Tensor* bias,
                     const Tensor& y, int upsample, const Tensor* residual, const Tensor& v, const Tensor& m,
                     const WinogradNorm* norm) {
  const char* op = "conv2d_winograd";
  if (u.shape.size() != 3 || x.shape.size() != 4 || u.dim(1) != kProducts || u.dim(2) != x.dim(3))
    throw invalid_argument(std::string(op) + ": weight " + u.describe() + " must be [Cout, 16, " +
                           std::to_string(x.dim(3)) + "] (conv_weight_to_winograd)");
  check_upsample(op, upsample);
  expect_shape(op, "y", y, {x.dim(0), x.dim(1) * upsample, x.dim(2) * upsample, u.dim(0)});
  if (!winograd_runs(kernels, x.dtype, x.dim(3), u.dim(0)))
    throw unsupported(std::string(op) + ": " + u.describe() + " on this route (winograd_runs)");
  winograd_input(kernels, rec, x, upsample, v, norm);
  linear_grouped(kernels, rec, v, u, m);
  winograd_output(kernels, rec, m, bias, residual, y);
}

void winograd_weight_row(const float* taps, int64_t cin, float* out) {
  // G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
  static constexpr double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  for (int64_t c = 0; c < cin; ++c) {
    const float* g = taps + c * kTaps * kTaps;
    double gg[4][3]; // G g
    for (int a = 0; a < 4; ++a)
      for (int j = 0; j < kTaps; ++j) {
        gg[a][j] = 0;
        for (int i = 0; i < kTaps; ++i) gg[a][j] += G[a][i] * g[i * kTaps + j];
      }
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {
        double s = 0;
        for (int j = 0; j < kTaps; ++j) s += gg[a][j] * G[b][j];
        out[(a * 4 + b) * cin + c] = static_cast<float>(s);
      }
  }
}

std::vector<float> conv_weight_to_winograd(const std::vector<float>& oihw, int64_t cout, int64_t cin) {
  if (cout < 0 || cin < 0 || static_cast<int64_t>(oihw.size()) != cout * cin * kTaps * kTaps)
    throw invalid_argument("conv_weight_to_winograd: " + std::to_string(oihw.size()) + " values do not form [" +
                           std::to_string(cout) + ", " + std::to_string(cin) + ", 3, 3]");
  std::vector<float> out(static_cast<size_t>(cout * kProducts * cin));
  for (int64_t o = 0; o < cout; ++o)
    winograd_weight_row(oihw.data() + o * cin * kTaps * kTaps, cin, out.data() + o * kProducts * cin);
  return out;
}

} // namespace z123::kernels
