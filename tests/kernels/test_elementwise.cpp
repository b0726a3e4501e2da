// Pointwise, timestep-embedding and data-movement kernels against float64 references
// (reference_pointwise.cpp), for fp32 and fp16 storage: element counts that are not multiples
// of a workgroup's 1024 elements, batch 2, every broadcast form, in-place use, poisoned outputs
// (a surviving poison value means a missed element), and the argument checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "reference_pointwise.hpp"
#include "support/check.hpp"
#include "support/vk_env.hpp"
#include "z123/error.hpp"
#include "z123/kernels/elementwise.hpp"
#include "z123/vk/recording.hpp"

using namespace z123;
namespace ref = z123::test::pointwise;

namespace {

struct Tol {
  double atol, rtol;
};

// fp32: one or two roundings of fp32 math plus GLSL exp (<= 3 + 2|x| ulp, ~2e-6 relative for
// |x| <= 8) inside GELU / SiLU -> 1e-6 absolute + 4e-6 relative. fp16: the single output
// rounding is 2^-11 relative (half an fp16 ulp); 1e-3 relative covers it with fp32 math on top,
// and 1e-4 absolute covers results that round into fp16's subnormal spacing near zero.
Tol pointwise_tolerance(DType dt) { return dt == DType::F32 ? Tol{1e-6, 4e-6} : Tol{1e-4, 1e-3}; }

std::vector<double> map(const std::vector<float>& v, const std::function<double(double)>& f) {
  std::vector<double> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = f(v[i]);
  return r;
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

class PointwiseTest : public test::VkTest, public ::testing::WithParamInterface<DType> {
protected:
  void SetUp() override {
    VkTest::SetUp();
    kernels_ = std::make_unique<kernels::Kernels>(device());
    seed_ = test::test_seed();
  }
  DType dt() const { return GetParam(); }
  std::string trace() const { return "seed " + std::to_string(seed_) + " (Z123_TEST_SEED)"; }

  // Random values as stored in dtype, uploaded; returned with the tensor.
  Tensor input(const std::vector<int64_t>& shape, std::vector<float>& values, float lo, float hi, uint64_t salt,
               DType dtype) {
    values = test::as_stored(test::random_uniform(numel(shape), seed_ + salt, lo, hi), dtype);
    return ref::upload_tensor(device(), dtype, shape, values, "in" + std::to_string(salt));
  }
  Tensor input(const std::vector<int64_t>& shape, std::vector<float>& values, float lo, float hi, uint64_t salt) {
    return input(shape, values, lo, hi, salt, dt());
  }
  Tensor output(const std::vector<int64_t>& shape, DType dtype) {
    Tensor t = make_tensor(device(), dtype, shape, "out");
    test::poison(device(), t);
    return t;
  }
  Tensor output(const std::vector<int64_t>& shape) { return output(shape, dt()); }

  void run(const std::function<void(vk::Recording&)>& record) {
    vk::Recording rec(device());
    record(rec);
    device().run(rec);
  }

  // Unary op out of place, then in place, on [2, 37, 13] (962 elements: scalar kernel, not a
  // multiple of a workgroup's 1024) and [2, 9, 36] (648: the 4-wide kernel).
  void check_unary(const std::function<void(vk::Recording&, const Tensor&, const Tensor&)>& op,
                   const std::function<double(double)>& f, float lo, float hi) {
    for (auto shape : {std::vector<int64_t>{2, 37, 13}, std::vector<int64_t>{2, 9, 36}})
      check_unary(op, f, lo, hi, shape);
  }
  void check_unary(const std::function<void(vk::Recording&, const Tensor&, const Tensor&)>& op,
                   const std::function<double(double)>& f, float lo, float hi, const std::vector<int64_t>& shape) {
    SCOPED_TRACE(trace() + ", shape " + shape_string(shape));
    std::vector<float> xv;
    Tensor x = input(shape, xv, lo, hi, 0);
    Tensor y = output(shape);
    run([&](vk::Recording& rec) { op(rec, x, y); });
    auto want = map(xv, f);
    Tol tol = pointwise_tolerance(dt());
    EXPECT_TRUE(test::all_close(download(device(), y), want, tol.atol, tol.rtol)) << "out of place";
    run([&](vk::Recording& rec) { op(rec, x, x); });
    EXPECT_TRUE(test::all_close(download(device(), x), want, tol.atol, tol.rtol)) << "in place";
  }

  std::unique_ptr<kernels::Kernels> kernels_;
  uint64_t seed_ = 0;
};

std::string dtype_param_name(const ::testing::TestParamInfo<DType>& info) { return dtype_name(info.param); }

} // namespace

// ---- activations -----------------------------------------------------------------------------------

class Elementwise : public PointwiseTest {};

TEST_P(Elementwise, GeluExactErf) {
  check_unary([&](vk::Recording& r, const Tensor& x, const Tensor& y) { kernels::gelu(*kernels_, r, x, y); }, ref::gelu,
              -8.0f, 8.0f);
}

TEST_P(Elementwise, GeluNegativeTailIsRelativelyAccurate) {
  // gelu(-5) ~ -1.4e-6: a plain erf with 1e-7 absolute error would be ~10% off here; the erfc
  // formulation keeps it to a few 1e-7 relative (fp32 only: fp16 flushes these to subnormals).
  if (dt() == DType::F16) GTEST_SKIP() << "fp16 cannot represent the tail values";
  SCOPED_TRACE(trace());
  std::vector<float> xv;
  Tensor x = input({3, 100}, xv, -6.0f, -3.0f, 0);
  Tensor y = output({3, 100});
  run([&](vk::Recording& r) { kernels::gelu(*kernels_, r, x, y); });
  // erfc fit: 1.2e-7 relative; exp of arguments up to ~19: <= 41 ulp (5e-6) by the Vulkan bound.
  EXPECT_TRUE(test::all_close(download(device(), y), map(xv, ref::gelu), 0.0, 1e-5));
}

TEST_P(Elementwise, Silu) {
  check_unary([&](vk::Recording& r, const Tensor& x, const Tensor& y) { kernels::silu(*kernels_, r, x, y); }, ref::silu,
              -12.0f, 12.0f);
}

TEST_P(Elementwise, ScaleShift) {
  check_unary(
      [&](vk::Recording& r, const Tensor& x, const Tensor& y) { kernels::scale_shift(*kernels_, r, x, y, 1.6f, 0.5f); },
      [](double v) { return static_cast<double>(1.6f) * v + 0.5; }, -3.0f, 3.0f);
}

TEST_P(Elementwise, Geglu) {
  for (int64_t F : {37, 40}) { // scalar and 4-wide kernels
    SCOPED_TRACE(trace() + ", F " + std::to_string(F));
    std::vector<float> xv;
    Tensor x = input({2, 13, 2 * F}, xv, -4.0f, 4.0f, 0);
    Tensor y = output({2, 13, F});
    run([&](vk::Recording& r) { kernels::geglu(*kernels_, r, x, y); });
    // value (<= 4) times gelu: the fp32 tolerance doubles for the product.
    Tol tol = pointwise_tolerance(dt());
    EXPECT_TRUE(test::all_close(download(device(), y), ref::geglu(xv, 26, F), 4 * tol.atol, 2 * tol.rtol));
  }
}

TEST_P(Elementwise, RejectsBadArguments) {
  auto& d = device();
  Tensor x = make_tensor(d, dt(), {4, 10}, "x");
  Tensor y_bad = make_tensor(d, dt(), {4, 9}, "y_bad");
  Tensor y_other = make_tensor(d, dt() == DType::F32 ? DType::F16 : DType::F32, {4, 10}, "y_other");
  Tensor x_odd = make_tensor(d, dt(), {4, 9}, "x_odd");
  Tensor half = make_tensor(d, dt(), {4, 5}, "half");
  vk::Recording rec(d);
  EXPECT_THROW(kernels::gelu(*kernels_, rec, x, y_bad), Error);
  EXPECT_THROW(kernels::silu(*kernels_, rec, x, y_other), Error);
  EXPECT_THROW(kernels::geglu(*kernels_, rec, x_odd, half), Error); // odd last dim
  EXPECT_THROW(kernels::geglu(*kernels_, rec, x, x), Error);        // y shape (and alias)
  EXPECT_EQ(rec.dispatch_count(), 0u);
}

// ---- binary ops with broadcast ----------------------------------------------------------------------

class BroadcastBinary : public PointwiseTest {
protected:
  enum class Form { Same, Last, Batch };

  // a [2, 45, C]; b per form; op in {add, mul, add_scaled}; also in place into a. C = 23 runs the
  // scalar kernel, C = 24 the 4-wide one.
  void check(Form form, int which) {
    for (int64_t C : {23, 24}) check(form, which, C);
  }
  void check(Form form, int which, int64_t C) {
    SCOPED_TRACE(trace() + ", form " + std::to_string(static_cast<int>(form)) + ", op " + std::to_string(which) +
                 ", C " + std::to_string(C));
    const int64_t B = 2, N = 45;
    std::vector<int64_t> bshape = form == Form::Same   ? std::vector<int64_t>{B, N, C}
                                  : form == Form::Last ? std::vector<int64_t>{C}
                                                       : std::vector<int64_t>{B, C};
    std::vector<float> av, bv;
    Tensor a = input({B, N, C}, av, -2.0f, 2.0f, 0);
    Tensor b = input(bshape, bv, -2.0f, 2.0f, 1);
    Tensor y = output({B, N, C});
    const float alpha = -0.75f, beta = 4.0f;
    auto record = [&](vk::Recording& r, const Tensor& out) {
      if (which == 0) kernels::add(*kernels_, r, a, b, out);
      if (which == 1) kernels::mul(*kernels_, r, a, b, out);
      if (which == 2) kernels::add_scaled(*kernels_, r, a, b, out, alpha, beta);
    };
    std::vector<double> want(av.size());
    for (int64_t i = 0; i < B * N * C; ++i) {
      int64_t bi = form == Form::Same ? i : form == Form::Last ? i % C : (i / (N * C)) * C + i % C;
      double x = av[i], z = bv[bi];
      want[i] = which == 0 ? x + z : which == 1 ? x * z : double(alpha) * x + double(beta) * z;
    }
    // fp32: one to three roundings of |values| <= 10 -> 3e-7 relative; fp16: output rounding.
    Tol tol = dt() == DType::F32 ? Tol{1e-6, 1e-6} : Tol{1e-4, 1e-3};
    run([&](vk::Recording& r) { record(r, y); });
    EXPECT_TRUE(test::all_close(download(device(), y), want, tol.atol, tol.rtol)) << "out of place";
    run([&](vk::Recording& r) { record(r, a); });
    EXPECT_TRUE(test::all_close(download(device(), a), want, tol.atol, tol.rtol)) << "in place";
  }
};

TEST_P(BroadcastBinary, AddSameShape) { check(Form::Same, 0); }
TEST_P(BroadcastBinary, AddPerChannel) { check(Form::Last, 0); }
TEST_P(BroadcastBinary, AddPerBatchChannel) { check(Form::Batch, 0); }
TEST_P(BroadcastBinary, MulSameShape) { check(Form::Same, 1); }
TEST_P(BroadcastBinary, MulPerChannel) { check(Form::Last, 1); }
TEST_P(BroadcastBinary, MulPerBatchChannel) { check(Form::Batch, 1); }
TEST_P(BroadcastBinary, AddScaledSameShape) { check(Form::Same, 2); }
TEST_P(BroadcastBinary, AddScaledPerBatchChannel) { check(Form::Batch, 2); }

TEST_P(BroadcastBinary, RejectsBadBroadcast) {
  auto& d = device();
  Tensor a = make_tensor(d, dt(), {2, 5, 7}, "a");
  Tensor b_bad = make_tensor(d, dt(), {5, 7}, "b_bad");
  Tensor b_batch = make_tensor(d, dt(), {2, 7}, "b_batch");
  Tensor a2 = make_tensor(d, dt(), {3, 7}, "a2");
  Tensor b_other = make_tensor(d, dt() == DType::F32 ? DType::F16 : DType::F32, {7}, "b_other");
  vk::Recording rec(d);
  EXPECT_THROW(kernels::add(*kernels_, rec, a, b_bad, a), Error);     // [N, C] is not a form
  EXPECT_THROW(kernels::add(*kernels_, rec, a2, b_batch, a2), Error); // [B, C] needs rank >= 3
  EXPECT_THROW(kernels::mul(*kernels_, rec, a, b_other, a), Error);   // dtype
  try {
    kernels::add(*kernels_, rec, a, b_bad, a);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("broadcast"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rec.dispatch_count(), 0u);
}

// ---- timestep embedding ------------------------------------------------------------------------------

class TimestepEmbedding : public PointwiseTest {
protected:
  void check(float t, int64_t B, int64_t dim, bool flip, float shift = 0.0f) {
    SCOPED_TRACE("t " + std::to_string(t) + ", dim " + std::to_string(dim) + ", flip " + std::to_string(flip));
    Tensor y = output({B, dim});
    run([&](vk::Recording& r) { kernels::timestep_embedding(*kernels_, r, t, y, flip, shift); });
    auto want = ref::timestep_embedding(t, B, dim, flip, shift, 10000.0f);
    // The reference rounds freq = exp(e) correctly to fp32; the kernel's exp may land one fp32
    // ulp (<= 2^-24 for freq < 1) away, which moves arg = t * freq by up to |t| 2^-24 (6e-5 at
    // t = 999). fp16 adds its output rounding (2^-11 relative).
    double atol = std::fabs(t) * std::ldexp(1.0, -24) * 1.5 + 1e-6;
    double rtol = dt() == DType::F32 ? 1e-6 : 1e-3;
    if (dt() == DType::F16) atol += 1e-4;
    EXPECT_TRUE(test::all_close(download(device(), y), want, atol, rtol));
  }
};

TEST_P(TimestepEmbedding, UNetTimesteps) {
  for (float t : {999.0f, 963.0f, 35.0f, 1.0f, 0.0f}) check(t, 2, 320, true);
}
TEST_P(TimestepEmbedding, FractionalTimestepAndSinFirst) { check(962.5f, 3, 320, false); }
TEST_P(TimestepEmbedding, OddHalfAndShift) { check(500.25f, 2, 2 * 37, true, 1.0f); }

// ---- data movement --------------------------------------------------------------------------------------

class DataMovement : public PointwiseTest {
protected:
  // cat([a, b]) over channels for a [2, 3, 5, Ca], b [2, 3, 5, Cb].
  void check_concat(int64_t Ca, int64_t Cb);
};

// Every (in, out) dtype pair; exact except fp32 -> fp16, which must round to nearest (half an
// fp16 ulp, 2^-11 relative; inputs stay in fp16's normal range).
TEST_P(DataMovement, CastBothDirections) {
  for (DType out : {DType::F32, DType::F16})
    for (int64_t C : {41, 40}) { // scalar and 4-wide kernels
      SCOPED_TRACE(trace() + std::string(", to ") + dtype_name(out) + ", C " + std::to_string(C));
      std::vector<float> xv;
      Tensor x = input({2, 3, C}, xv, -70000.0f / 1024, 70000.0f / 1024, 0);
      Tensor y = output({2, 3, C}, out);
      run([&](vk::Recording& r) { kernels::cast(*kernels_, r, x, y); });
      double rtol = (dt() == DType::F32 && out == DType::F16) ? std::ldexp(1.0, -11) : 0.0;
      EXPECT_TRUE(test::all_close(download(device(), y), ref::to_double(xv), 0.0, rtol));
    }
}

// Over 65535 workgroups: the workgroup index wraps into grid y (elementwise and layout kernels).
// 68 M elements: GPU only (lavapipe would take minutes).
TEST_P(DataMovement, HugeTensorsWrapTheGrid) {
  if (device().info().type == VK_PHYSICAL_DEVICE_TYPE_CPU) GTEST_SKIP() << "too large for a CPU device";
  SCOPED_TRACE(trace());
  const int64_t n = 65537 * 1024 + 3; // scalar kernels: 1024 elements per workgroup
  std::vector<float> xv(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) xv[i] = static_cast<float>(i % 2039) - 1000.0f; // exact in fp16
  Tensor x = ref::upload_tensor(device(), dt(), {n}, xv, "x");
  Tensor y = output({n});
  Tensor z = output({n});
  run([&](vk::Recording& r) {
    kernels::cast(*kernels_, r, x, y);
    kernels::scale_shift(*kernels_, r, y, z, 1.0f, 1.0f);
  });
  std::vector<double> want(xv.begin(), xv.end());
  EXPECT_TRUE(test::all_close(download(device(), y), want, 0.0, 0.0)) << "cast";
  for (auto& v : want) v += 1.0;
  EXPECT_TRUE(test::all_close(download(device(), z), want, 0.0, 0.0)) << "scale_shift";
}

TEST_P(DataMovement, NchwToNhwcAndBack) {
  SCOPED_TRACE(trace());
  const int64_t B = 2, C = 3, H = 5, W = 7;
  std::vector<float> xv;
  Tensor x = input({B, C, H, W}, xv, -1.0f, 1.0f, 0, DType::F32); // host images arrive as fp32
  Tensor nhwc = output({B, H, W, C});
  run([&](vk::Recording& r) { kernels::nchw_to_nhwc(*kernels_, r, x, nhwc); });
  auto stored = test::as_stored(xv, dt());
  auto want = ref::nchw_to_nhwc(stored, B, C, H, W);
  EXPECT_TRUE(test::all_close(download(device(), nhwc), want, 0.0, 0.0)) << "to nhwc";
  Tensor back = output({B, C, H, W}, DType::F32);
  run([&](vk::Recording& r) { kernels::nhwc_to_nchw(*kernels_, r, nhwc, back); });
  EXPECT_TRUE(test::all_close(download(device(), back), ref::to_double(stored), 0.0, 0.0)) << "back";
  auto planar = ref::nhwc_to_nchw(std::vector<float>(want.begin(), want.end()), B, H, W, C);
  EXPECT_TRUE(test::all_close(download(device(), back), planar, 0.0, 0.0)) << "reference round trip";
}

TEST_P(DataMovement, UpsampleNearest2x) {
  SCOPED_TRACE(trace());
  const int64_t B = 2, H = 3, W = 5, C = 37; // one partial 64-lane channel block
  std::vector<float> xv;
  Tensor x = input({B, H, W, C}, xv, -1.0f, 1.0f, 0);
  Tensor y = output({B, 2 * H, 2 * W, C});
  run([&](vk::Recording& r) { kernels::upsample_nearest2x(*kernels_, r, x, y); });
  EXPECT_TRUE(test::all_close(download(device(), y), ref::upsample_nearest2x(xv, B, H, W, C), 0.0, 0.0));
}

TEST_P(DataMovement, UpsampleWideChannels) {
  SCOPED_TRACE(trace());
  const int64_t B = 1, H = 2, W = 3, C = 132; // 4-wide kernel; 33 vectors per pixel
  std::vector<float> xv;
  Tensor x = input({B, H, W, C}, xv, -1.0f, 1.0f, 0);
  Tensor y = output({B, 2 * H, 2 * W, C});
  run([&](vk::Recording& r) { kernels::upsample_nearest2x(*kernels_, r, x, y); });
  EXPECT_TRUE(test::all_close(download(device(), y), ref::upsample_nearest2x(xv, B, H, W, C), 0.0, 0.0));
}

TEST_P(DataMovement, ConcatChannelsCurrentFirst) {
  for (int64_t Ca : {7, 8}) check_concat(Ca, 2 * Ca + 56); // scalar, then 4-wide kernels
}

void DataMovement::check_concat(int64_t Ca, int64_t Cb) {
  SCOPED_TRACE(trace() + ", Ca " + std::to_string(Ca) + ", Cb " + std::to_string(Cb));
  const int64_t B = 2, H = 3, W = 5;
  std::vector<float> av, bv;
  Tensor a = input({B, H, W, Ca}, av, -1.0f, 1.0f, 0);
  Tensor b = input({B, H, W, Cb}, bv, -1.0f, 1.0f, 1);
  Tensor y = output({B, H, W, Ca + Cb});
  run([&](vk::Recording& r) { kernels::concat_channels(*kernels_, r, a, b, y); });
  std::vector<double> want;
  for (int64_t p = 0; p < B * H * W; ++p) {
    want.insert(want.end(), av.begin() + p * Ca, av.begin() + (p + 1) * Ca);
    want.insert(want.end(), bv.begin() + p * Cb, bv.begin() + (p + 1) * Cb);
  }
  EXPECT_TRUE(test::all_close(download(device(), y), want, 0.0, 0.0));
}

// Ordered by levels, the concat of a just-made tensor a with an older b follows a's producer by
// one level (b's copy goes beside that producer), not two: the UNet's skip concat on the step's
// chain (bench/NOTES.md session 33).
TEST_P(DataMovement, ConcatChannelsOneLevelAfterTheNewerSource) {
  SCOPED_TRACE(trace());
  const int64_t B = 2, HW = 6, Ca = 8, Cb = 12;
  std::vector<float> av, bv;
  Tensor a0 = input({B, HW, Ca}, av, -1.0f, 1.0f, 0);
  Tensor b = input({B, HW, Cb}, bv, -1.0f, 1.0f, 1);
  Tensor a = output({B, HW, Ca}), y = output({B, HW, Ca + Cb});
  vk::Recording rec(device());
  rec.order_by_levels();
  kernels::cast(*kernels_, rec, a0, a); // level 0: a made (b was made before the recording)
  kernels::concat_channels(*kernels_, rec, a, b, y);
  rec.finish();
  EXPECT_EQ(rec.barrier_count(), 1u); // b's copy at level 0 beside a's producer, a's at level 1
  device().run(rec);
  std::vector<double> want;
  for (int64_t p = 0; p < B * HW; ++p) {
    want.insert(want.end(), av.begin() + p * Ca, av.begin() + (p + 1) * Ca);
    want.insert(want.end(), bv.begin() + p * Cb, bv.begin() + (p + 1) * Cb);
  }
  EXPECT_TRUE(test::all_close(download(device(), y), want, 0.0, 0.0));
}

TEST_P(DataMovement, CopyChannelsLeavesOtherChannels) {
  SCOPED_TRACE(trace());
  const int64_t B = 2, HW = 11, Cx = 5, Cy = 12, offset = 4;
  std::vector<float> xv;
  Tensor x = input({B, HW, Cx}, xv, -1.0f, 1.0f, 0, DType::F32); // converts on the way when F16
  Tensor y = output({B, HW, Cy});
  run([&](vk::Recording& r) { kernels::copy_channels(*kernels_, r, x, y, offset); });
  auto stored = test::as_stored(xv, dt());
  // Untouched channels keep the poison as y stores it (-12345 rounds to -12344 in fp16).
  const double untouched = test::as_stored({test::kPoisonValue}, dt())[0];
  std::vector<double> want(static_cast<size_t>(B * HW * Cy), untouched);
  for (int64_t p = 0; p < B * HW; ++p)
    for (int64_t c = 0; c < Cx; ++c) want[p * Cy + offset + c] = stored[p * Cx + c];
  EXPECT_TRUE(test::all_close(download(device(), y), want, 0.0, 0.0));
}

// The decoded image to 8-bit RGBA, against float64 arithmetic rounded half to even: values
// inside and outside the clamped range, exact zeros, and a pixel count that is not a multiple of
// the 256-pixel workgroup. fp32 rounding may move a value that lies within 1e-4 of a half-way
// point by one level; every other byte must match exactly, and alpha is 255.
TEST_P(DataMovement, ImageToRgba8) {
  SCOPED_TRACE(trace());
  const int64_t H = 7, W = 41;
  const float unscale = 1.6f;
  std::vector<float> xv;
  Tensor x = input({1, H, W, 3}, xv, -0.9f, 0.9f, 0); // beyond +-1/1.6 = +-0.625: clamps both ends
  xv[0] = xv[4] = 0.0f;
  xv[1] = -0.625f; // exactly 0 after scaling
  xv[2] = 0.625f;  // exactly 255
  x = ref::upload_tensor(device(), dt(), {1, H, W, 3}, xv, "image");
  const size_t pixels = static_cast<size_t>(H * W);
  vk::Buffer rgba = device().allocator().create_buffer(4 * pixels, vk::MemoryUsage::Download, "rgba");
  std::vector<uint32_t> poison(pixels, 0xdeadbeefu);
  device().upload(rgba, poison.data(), 4 * pixels);
  run([&](vk::Recording& r) { kernels::image_to_rgba8(*kernels_, r, x, rgba, unscale); });
  std::vector<uint8_t> got(4 * pixels);
  device().download(rgba, got.data(), got.size());
  int mismatches = 0;
  for (size_t p = 0; p < pixels; ++p) {
    for (size_t c = 0; c < 4; ++c) {
      const double raw =
          c < 3 ? std::clamp(double(xv[3 * p + c]) * double(unscale) / 2.0 + 0.5, 0.0, 1.0) * 255.0 : 255.0;
      const double v = std::nearbyint(raw); // the default rounding mode: half to even
      const bool near_half = std::abs(raw - std::floor(raw) - 0.5) < 1e-4;
      const double diff = std::abs(double(got[4 * p + c]) - v);
      if (diff > (near_half ? 1.0 : 0.0) && ++mismatches <= 5)
        ADD_FAILURE() << "pixel " << p << " channel " << c << ": got " << int(got[4 * p + c]) << ", want " << v;
    }
  }
  EXPECT_EQ(got[0], 128) << "0 maps to 127.5, rounded half to even";
  EXPECT_EQ(got[1], 0);
  EXPECT_EQ(got[2], 255);
  EXPECT_EQ(mismatches, 0);
}

TEST_P(DataMovement, ImageToRgba8RejectsBadArguments) {
  auto& d = device();
  Tensor four = make_tensor(d, dt(), {1, 2, 2, 4}, "four channels");
  Tensor x = make_tensor(d, dt(), {1, 2, 2, 3}, "x");
  vk::Buffer small = d.allocator().create_buffer(12, vk::MemoryUsage::Download, "small");
  vk::Buffer fits = d.allocator().create_buffer(16, vk::MemoryUsage::Download, "fits");
  vk::Recording rec(d);
  EXPECT_THROW(kernels::image_to_rgba8(*kernels_, rec, four, fits, 1.6f), Error);
  EXPECT_THROW(kernels::image_to_rgba8(*kernels_, rec, x, small, 1.6f), Error); // 4 pixels, 12 bytes
  EXPECT_THROW(kernels::image_to_rgba8(*kernels_, rec, x, fits, 0.0f), Error);
  EXPECT_EQ(rec.dispatch_count(), 0u);
}

TEST_P(DataMovement, RejectsBadArguments) {
  auto& d = device();
  Tensor x = make_tensor(d, dt(), {2, 3, 5, 7}, "x");
  Tensor wrong = make_tensor(d, dt(), {2, 6, 10, 8}, "wrong");
  Tensor y = make_tensor(d, dt(), {2, 3, 5, 10}, "y");
  Tensor flat = make_tensor(d, dt(), {2, 15, 7}, "flat");
  vk::Recording rec(d);
  EXPECT_THROW(kernels::upsample_nearest2x(*kernels_, rec, x, wrong), Error);
  EXPECT_THROW(kernels::upsample_nearest2x(*kernels_, rec, flat, wrong), Error); // rank 3
  EXPECT_THROW(kernels::copy_channels(*kernels_, rec, x, y, 4), Error);          // 4 + 7 > 10
  EXPECT_THROW(kernels::copy_channels(*kernels_, rec, x, x, 0), Error);          // alias
  EXPECT_THROW(kernels::concat_channels(*kernels_, rec, x, x, y), Error);        // 14 != 10
  EXPECT_THROW(kernels::nchw_to_nhwc(*kernels_, rec, x, x), Error);
  EXPECT_THROW(kernels::cast(*kernels_, rec, x, flat), Error);
  EXPECT_EQ(rec.dispatch_count(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Pointwise, Elementwise, ::testing::Values(DType::F32, DType::F16), dtype_param_name);
INSTANTIATE_TEST_SUITE_P(Pointwise, BroadcastBinary, ::testing::Values(DType::F32, DType::F16), dtype_param_name);
INSTANTIATE_TEST_SUITE_P(Pointwise, TimestepEmbedding, ::testing::Values(DType::F32, DType::F16), dtype_param_name);
INSTANTIATE_TEST_SUITE_P(Pointwise, DataMovement, ::testing::Values(DType::F32, DType::F16), dtype_param_name);

// ---- throughput (timing, not correctness) -----------------------------------------------------------
// Run with --gtest_also_run_disabled_tests --gtest_filter='PointwiseBench*' (Z123_BENCH_FULL=1 for
// the model's sizes). Effective bandwidth = bytes read + written once, next to a buffer copy.
class PointwiseBench : public test::VkTest {};

TEST_F(PointwiseBench, DISABLED_ModelShapes) {
  const bool full = ref::bench_full_size();
  const int reps = full ? 50 : 2;
  const int64_t rows = full ? 9600 : 600; // UNet level-0 tokens per image
  kernels::Kernels k(device());
  const DType h = DType::F16;
  auto report = [&](const char* name, double bytes, double ms) {
    std::printf("%-34s %9.1f us %7.0f GB/s\n", name, ms * 1e3, bytes / ms * 1e-6);
  };
  Tensor big = make_tensor(device(), h, {2, rows, 2560}, "big"); // GEGLU input at level 0
  Tensor mid = make_tensor(device(), h, {2, rows, 1280}, "mid");
  Tensor mid2 = make_tensor(device(), h, {2, rows, 1280}, "mid2");
  Tensor a = make_tensor(device(), h, {2, rows, 320}, "a");
  Tensor a2 = make_tensor(device(), h, {2, rows, 320}, "a2");
  Tensor emb = make_tensor(device(), h, {2, 320}, "emb");
  Tensor cat = make_tensor(device(), h, {2, rows, 960}, "cat");
  Tensor skip = make_tensor(device(), h, {2, rows, 640}, "skip");
  Tensor a32 = make_tensor(device(), DType::F32, {2, rows, 320}, "a32");
  const int64_t lh = full ? 60 : 15, lw = full ? 40 : 10;
  Tensor low = make_tensor(device(), h, {2, lh, lw, 640}, "low");
  Tensor up = make_tensor(device(), h, {2, 2 * lh, 2 * lw, 640}, "up");

  auto t = [&](const std::function<void(vk::Recording&)>& f) { return ref::bench_ms(device(), f, reps); };
  // Dependent tiny dispatches: the fixed cost of one dispatch plus its barrier.
  report("tiny add chain (latency per call)", 3.0 * emb.bytes(),
         t([&](vk::Recording& r) { kernels::add(k, r, emb, emb, emb); }));
  report("copy [2,L0,1280] (vkCmdCopyBuffer)", 2.0 * mid.bytes(),
         t([&](vk::Recording& r) { r.copy(mid.buf(), mid2.buf(), mid.bytes()); }));
  report("cast f16->f16 [2,L0,1280]", 2.0 * mid.bytes(), t([&](vk::Recording& r) { kernels::cast(k, r, mid, mid2); }));
  report("gelu [2,L0,1280]", 2.0 * mid.bytes(), t([&](vk::Recording& r) { kernels::gelu(k, r, mid, mid2); }));
  report("silu [2,L0,1280]", 2.0 * mid.bytes(), t([&](vk::Recording& r) { kernels::silu(k, r, mid, mid2); }));
  report("geglu [2,L0,2560]->1280", 1.0 * big.bytes() + mid.bytes(),
         t([&](vk::Recording& r) { kernels::geglu(k, r, big, mid); }));
  report("add [2,L0,1280] same", 3.0 * mid.bytes(), t([&](vk::Recording& r) { kernels::add(k, r, mid, mid2, mid2); }));
  report("add [2,L0,320] + emb [2,320]", 2.0 * a.bytes(), t([&](vk::Recording& r) { kernels::add(k, r, a, emb, a2); }));
  report("cast f32->f16 [2,L0,320]", 1.0 * a32.bytes() + a.bytes(),
         t([&](vk::Recording& r) { kernels::cast(k, r, a32, a); }));
  report("upsample2x [2,L1,640]", 1.0 * low.bytes() + up.bytes(),
         t([&](vk::Recording& r) { kernels::upsample_nearest2x(k, r, low, up); }));
  report("concat [2,L0,640]+[2,L0,320]", 2.0 * cat.bytes(),
         t([&](vk::Recording& r) { kernels::concat_channels(k, r, skip, a, cat); }));
}
