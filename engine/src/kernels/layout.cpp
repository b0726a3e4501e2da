// Data movement with dtype conversion (shaders/layout.comp): cast, NCHW <-> NHWC, nearest x2
// upsampling and channel-offset copies (the UNet skip concat); the decoded image to 8-bit RGBA
// (shaders/rgba8.comp). Declared in elementwise.hpp.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>

#include "kernels/grid.hpp"
#include "kernels/shader_names.hpp"
#include "z123/error.hpp"
#include "z123/kernels/elementwise.hpp"

namespace z123::kernels {
namespace {

// Must match shaders/layout.comp.
enum Op : uint32_t { kCopyRows = 0, kUpsample2x = 1, kNchwToNhwc = 2, kNhwcToNchw = 3 };

struct LayoutPush {
  uint32_t op, CV, rows, dst_stride, dst_offset, HW, W;
};

constexpr uint32_t kThreads = 256;
constexpr uint32_t kElems = 4; // ELEMS in the shader

std::string layout_variant(DType in, DType out, uint32_t vec) {
  return std::string("layout_") + dtype_name(in) + "_" + dtype_name(out) + (vec == 4 ? "_vec4" : "");
}

void check_rank(const char* op, const char* what, const Tensor& t, size_t rank) {
  if (t.shape.size() != rank)
    throw invalid_argument(std::string(op) + ": " + what + " must have rank " + std::to_string(rank) + ", found " +
                           t.describe());
}

void check_no_alias(const char* op, const Tensor& x, const Tensor& y) {
  if (x.buffer == y.buffer)
    throw invalid_argument(std::string(op) + ": y " + y.describe() + " must not share its buffer with x");
}

// p holds element counts; with vec = 4 (every count a multiple of 4) they become vector counts.
void dispatch(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y, LayoutPush p, uint32_t vec) {
  if (vec == 4) {
    p.CV /= 4;
    p.dst_stride /= 4;
    p.dst_offset /= 4;
  }
  auto& pipe = kernels.pipeline(layout_variant(x.dtype, y.dtype, vec), 2, sizeof p, {kThreads});
  Grid g = wrap_grid(div_up(static_cast<int64_t>(p.rows) * p.CV, kThreads * kElems));
  rec.dispatch(pipe, {vk::in(x.buf()), vk::out(y.buf())}, &p, sizeof p, g.x, g.y);
}

uint32_t vec_for(std::initializer_list<int64_t> counts) {
  for (int64_t c : counts)
    if (c % 4 != 0) return 1;
  return 4;
}

// x: [B, C, H, W] or [B, H, W, C] planar/interleaved image; returns B, C, HW.
void transpose(Kernels& kernels, vk::Recording& rec, const char* op, const Tensor& x, const Tensor& y, bool to_nhwc) {
  check_rank(op, "x", x, 4);
  const auto& s = x.shape;
  std::vector<int64_t> want =
      to_nhwc ? std::vector<int64_t>{s[0], s[2], s[3], s[1]} : std::vector<int64_t>{s[0], s[3], s[1], s[2]};
  expect_shape(op, "y", y, want);
  check_no_alias(op, x, y);
  expect_indexable(op, x);
  const int64_t C = to_nhwc ? s[1] : s[3];
  const int64_t HW = to_nhwc ? s[2] * s[3] : s[1] * s[2];
  LayoutPush p{to_nhwc ? kNchwToNhwc : kNhwcToNchw,
               static_cast<uint32_t>(C),
               static_cast<uint32_t>(s[0] * HW),
               0,
               0,
               static_cast<uint32_t>(HW),
               0};
  dispatch(kernels, rec, x, y, p, 1);
}

} // namespace

void cast(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y) {
  const char* op = "cast";
  expect_shape(op, "y", y, x.shape);
  expect_indexable(op, x);
  if (x.buffer == y.buffer && x.dtype != y.dtype)
    throw invalid_argument(std::string(op) + ": in-place conversion of " + x.describe() + " to " + dtype_name(y.dtype) +
                           " is not possible");
  // One flat row: the walk is the same, and any length that is a multiple of 4 moves as vectors.
  const int64_t n = x.numel();
  LayoutPush p{kCopyRows, static_cast<uint32_t>(n), 1, static_cast<uint32_t>(n), 0, 0, 0};
  dispatch(kernels, rec, x, y, p, vec_for({n}));
}

void nchw_to_nhwc(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y) {
  transpose(kernels, rec, "nchw_to_nhwc", x, y, true);
}

void nhwc_to_nchw(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y) {
  transpose(kernels, rec, "nhwc_to_nchw", x, y, false);
}

void upsample_nearest2x(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y) {
  const char* op = "upsample_nearest2x";
  check_rank(op, "x", x, 4);
  const int64_t B = x.dim(0), H = x.dim(1), W = x.dim(2), C = x.dim(3);
  expect_shape(op, "y", y, {B, 2 * H, 2 * W, C});
  check_no_alias(op, x, y);
  expect_indexable(op, y);
  LayoutPush p{kUpsample2x, static_cast<uint32_t>(C), static_cast<uint32_t>(B * H * W), 0, 0,
               0,           static_cast<uint32_t>(W)};
  dispatch(kernels, rec, x, y, p, vec_for({C}));
}

void copy_channels(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y, int64_t offset) {
  const char* op = "copy_channels";
  if (x.shape.size() != 3 && x.shape.size() != 4)
    throw invalid_argument(std::string(op) + ": x must be [B, HW, C] or [B, H, W, C], found " + x.describe());
  const int64_t Cx = x.dim(-1);
  if (y.shape.size() != x.shape.size() || !std::equal(x.shape.begin(), x.shape.end() - 1, y.shape.begin()))
    throw invalid_argument(std::string(op) + ": y " + y.describe() + " must match x " + x.describe() +
                           " in every dim but the last");
  const int64_t Cy = y.dim(-1);
  if (offset < 0 || offset + Cx > Cy)
    throw invalid_argument(std::string(op) + ": channels [" + std::to_string(offset) + ", " +
                           std::to_string(offset + Cx) + ") of x " + x.describe() + " do not fit in y " + y.describe());
  check_no_alias(op, x, y);
  expect_indexable(op, y);
  LayoutPush p{kCopyRows,
               static_cast<uint32_t>(Cx),
               static_cast<uint32_t>(x.numel() / Cx),
               static_cast<uint32_t>(Cy),
               static_cast<uint32_t>(offset),
               0,
               0};
  dispatch(kernels, rec, x, y, p, vec_for({Cx, Cy, offset}));
}

void concat_channels(Kernels& kernels, vk::Recording& rec, const Tensor& a, const Tensor& b, const Tensor& y) {
  const char* op = "concat_channels";
  if (a.shape.size() != b.shape.size() || a.shape.empty() ||
      !std::equal(a.shape.begin(), a.shape.end() - 1, b.shape.begin()))
    throw invalid_argument(std::string(op) + ": a " + a.describe() + " and b " + b.describe() +
                           " must match in every dim but the last");
  std::vector<int64_t> want = a.shape;
  want.back() = a.dim(-1) + b.dim(-1);
  expect_shape(op, "y", y, want);
  // b first: the two copies write the same buffer, so a recording ordered by levels puts the
  // second one level after the first. In the UNet's up path b is the skip, made long before, and a
  // the tensor just made: this way b's copy can take an early level and only a's follows its
  // producer, one level on the step's chain instead of two (bench/NOTES.md session 33).
  copy_channels(kernels, rec, b, y, a.dim(-1));
  copy_channels(kernels, rec, a, y, 0);
}

void image_to_rgba8(Kernels& kernels, vk::Recording& rec, const Tensor& x, const vk::Buffer& rgba, float unscale) {
  const char* op = "image_to_rgba8";
  if (x.shape.empty() || x.dim(-1) != 3)
    throw invalid_argument(std::string(op) + ": x must be [..., 3] (RGB, channels last), found " + x.describe());
  expect_indexable(op, x);
  if (!(unscale > 0.0f) || !std::isfinite(unscale))
    throw invalid_argument(std::string(op) + ": unscale must be a positive finite number");
  const uint64_t pixels = static_cast<uint64_t>(x.numel() / 3);
  if (rgba.size() < 4 * pixels)
    throw invalid_argument(std::string(op) + ": buffer '" + rgba.name() + "' holds " + std::to_string(rgba.size()) +
                           " bytes, " + std::to_string(4 * pixels) + " needed for " + x.describe());
  struct {
    uint32_t pixels;
    float unscale;
  } p{static_cast<uint32_t>(pixels), unscale};
  auto& pipe = kernels.pipeline(variant("rgba8", x.dtype), 2, sizeof p);
  Grid g = wrap_grid(div_up(static_cast<int64_t>(pixels), kThreads));
  rec.dispatch(pipe, {vk::in(x.buf()), vk::out(rgba)}, &p, sizeof p, g.x, g.y);
}

} // namespace z123::kernels
