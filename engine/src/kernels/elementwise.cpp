// Pointwise ops (shaders/elementwise.comp) and the timestep embedding
// (shaders/timestep_embedding.comp): shape checks, broadcast resolution, dispatch geometry.
#include "z123/kernels/elementwise.hpp"

#include <cmath>
#include <string>

#include "kernels/grid.hpp"
#include "kernels/shader_names.hpp"
#include "z123/error.hpp"

namespace z123::kernels {
namespace {

// Must match shaders/elementwise.comp.
enum Op : uint32_t { kGelu = 0, kSilu = 1, kScaleShift = 2, kGeglu = 3, kAxpby = 4, kMul = 5 };
enum Bcast : uint32_t { kSame = 0, kLast = 1, kBatch = 2 };

struct ElementwisePush {
  uint32_t count, op, bcast, inner, outer;
  float alpha, beta;
};

constexpr uint32_t kThreads = 256;
constexpr uint32_t kElems = 4; // ELEMS in the shader

// p holds element counts; when count, inner and outer are all multiples of 4 the vec4 variant
// runs on vector counts instead.
void run(Kernels& kernels, vk::Recording& rec, const Tensor& a, const Tensor& b, const Tensor& y, ElementwisePush p) {
  const bool vec4 = p.count % 4 == 0 && p.inner % 4 == 0 && p.outer % 4 == 0;
  if (vec4) {
    p.count /= 4;
    p.inner /= 4;
    p.outer /= 4;
  }
  auto& pipe = kernels.pipeline(vec4 ? variant("elementwise_vec4", y.dtype) : variant("elementwise", y.dtype), 3,
                                sizeof p, {kThreads});
  Grid g = wrap_grid(div_up(p.count, kThreads * kElems));
  rec.dispatch(pipe, {vk::in(a.buf()), vk::in(b.buf()), vk::out(y.buf())}, &p, sizeof p, g.x, g.y);
}

void unary(Kernels& kernels, vk::Recording& rec, const char* op, const Tensor& x, const Tensor& y, Op code,
           float alpha = 0, float beta = 0) {
  expect_shape(op, "y", y, x.shape);
  expect_same_dtype(op, x, y);
  expect_indexable(op, x);
  ElementwisePush p{static_cast<uint32_t>(x.numel()), code, kSame, 0, 0, alpha, beta};
  run(kernels, rec, x, x, y, p);
}

void binary(Kernels& kernels, vk::Recording& rec, const char* op, const Tensor& a, const Tensor& b, const Tensor& y,
            Op code, float alpha = 0, float beta = 0) {
  expect_shape(op, "y", y, a.shape);
  expect_same_dtype(op, a, b);
  expect_same_dtype(op, a, y);
  expect_indexable(op, a);
  ElementwisePush p{static_cast<uint32_t>(a.numel()), code, kSame, 0, 0, alpha, beta};
  const int64_t C = a.dim(-1);
  if (b.shape == a.shape) {
    p.bcast = kSame;
  } else if (b.shape == std::vector<int64_t>{C}) {
    p.bcast = kLast;
    p.inner = static_cast<uint32_t>(C);
  } else if (a.shape.size() >= 3 && b.shape == std::vector<int64_t>{a.dim(0), C}) {
    p.bcast = kBatch;
    p.inner = static_cast<uint32_t>(C);
    p.outer = static_cast<uint32_t>(a.numel() / a.dim(0));
  } else {
    throw invalid_argument(std::string(op) + ": b " + b.describe() + " does not broadcast onto a " + a.describe() +
                           " (b must be a's shape, [C] or [B, C] with C = a's last dim)");
  }
  run(kernels, rec, a, b, y, p);
}

struct TimestepPush {
  uint32_t half_dim;
  float t;
  float neg_log_period;
  float denom;
  uint32_t flip;
};

} // namespace

void gelu(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y) {
  unary(kernels, rec, "gelu", x, y, kGelu);
}

void silu(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y) {
  unary(kernels, rec, "silu", x, y, kSilu);
}

void scale_shift(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y, float scale, float shift) {
  unary(kernels, rec, "scale_shift", x, y, kScaleShift, scale, shift);
}

void geglu(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y) {
  const char* op = "geglu";
  if (x.shape.empty() || x.dim(-1) % 2 != 0)
    throw invalid_argument(std::string(op) + ": x's last dim must be even (value and gate halves), found " +
                           x.describe());
  std::vector<int64_t> want = x.shape;
  want.back() /= 2;
  expect_shape(op, "y", y, want);
  expect_same_dtype(op, x, y);
  if (y.buffer == x.buffer)
    throw invalid_argument(std::string(op) + ": y " + y.describe() + " must not share its buffer with x");
  expect_indexable(op, x);
  ElementwisePush p{static_cast<uint32_t>(y.numel()), kGeglu, kSame, static_cast<uint32_t>(want.back()), 0, 0, 0};
  run(kernels, rec, x, x, y, p);
}

void add(Kernels& kernels, vk::Recording& rec, const Tensor& a, const Tensor& b, const Tensor& y) {
  binary(kernels, rec, "add", a, b, y, kAxpby, 1.0f, 1.0f);
}

void mul(Kernels& kernels, vk::Recording& rec, const Tensor& a, const Tensor& b, const Tensor& y) {
  binary(kernels, rec, "mul", a, b, y, kMul);
}

void add_scaled(Kernels& kernels, vk::Recording& rec, const Tensor& a, const Tensor& b, const Tensor& y, float alpha,
                float beta) {
  binary(kernels, rec, "add_scaled", a, b, y, kAxpby, alpha, beta);
}

void timestep_embedding(Kernels& kernels, vk::Recording& rec, float t, const Tensor& y, bool flip_sin_to_cos,
                        float freq_shift, float max_period) {
  const char* op = "timestep_embedding";
  if (y.shape.size() != 2 || y.dim(1) % 2 != 0)
    throw invalid_argument(std::string(op) + ": y must be [B, dim] with an even dim, found " + y.describe());
  const int64_t half = y.dim(1) / 2;
  if (!(max_period > 1.0f) || !(static_cast<float>(half) - freq_shift > 0.0f))
    throw invalid_argument(std::string(op) + ": max_period must be > 1 and freq_shift < dim / 2 (got " +
                           std::to_string(max_period) + ", " + std::to_string(freq_shift) + ")");
  if (!(std::fabs(t) < 4096.0f)) // the shader's sin/cos range reduction is exact up to ~6000 rad
    throw invalid_argument(std::string(op) + ": timestep " + std::to_string(t) + " outside [-4096, 4096]");
  if (y.dim(0) > static_cast<int64_t>(kMaxGridDim))
    throw invalid_argument(std::string(op) + ": more than 65535 rows in " + y.describe());
  TimestepPush p{static_cast<uint32_t>(half), t, static_cast<float>(-std::log(static_cast<double>(max_period))),
                 static_cast<float>(half) - freq_shift, flip_sin_to_cos ? 1u : 0u};
  auto& pipe = kernels.pipeline(variant("timestep_embedding", y.dtype), 1, sizeof p, {64});
  rec.dispatch(pipe, {vk::out(y.buf())}, &p, sizeof p, div_up(half, 64), static_cast<uint32_t>(y.dim(0)));
}

} // namespace z123::kernels
