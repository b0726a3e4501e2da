// linear(): every case against the float64 reference on every path/dtype (gemm_test_cases),
// with outputs poisoned first so a missed element fails. Shapes are deliberately not multiples
// of any tile (the portable kernel's 4 x 4 blocks, the coopmat kernel's 128 x 128 x 32 tiles),
// and K is chosen to hit both the vectorized (K % 4 / K % 8 == 0) and element-wise loaders.
#include <gtest/gtest.h>
#include <optional>

#include <cmath>
#include <memory>
#include <string>

#include "kernels/gemm_dispatch.hpp"
#include "reference_gemm.hpp"
#include "support/check.hpp"
#include "support/vk_env.hpp"
#include "z123/error.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/vk/recording.hpp"

using namespace z123;
using kernels::Epilogue;

namespace {

class Linear : public test::GemmPathTest {
protected:
  // Random x [lead..., K] (seed), w [rows, K] within +-wscale (seed + 1) and, where wanted, a bias
  // [rows] (seed + 2), rounded to the storage type and uploaded; y [lead..., cols], poisoned.
  struct Operands {
    int64_t M = 1;
    std::vector<float> xv, wv, bv;
    Tensor x, w, y;
    std::unique_ptr<Tensor> b;
  };
  Operands operands(const std::vector<int64_t>& lead, int64_t K, int64_t rows, int64_t cols, bool with_bias,
                    float wscale, uint64_t seed) {
    const DType dt = GetParam().dtype;
    Operands o;
    for (int64_t d : lead) o.M *= d;
    std::vector<int64_t> xs = lead, ys = lead;
    xs.push_back(K);
    ys.push_back(cols);
    o.xv = test::as_stored(test::random_uniform(o.M * K, seed, -1, 1), dt);
    o.wv = test::as_stored(test::random_uniform(rows * K, seed + 1, -wscale, wscale), dt);
    if (with_bias) o.bv = test::as_stored(test::random_uniform(rows, seed + 2, -0.5f, 0.5f), dt);
    o.x = test::device_tensor(device(), dt, xs, o.xv, "x");
    o.w = test::device_tensor(device(), dt, {rows, K}, o.wv, "w");
    o.y = make_tensor(device(), dt, ys, "y");
    if (with_bias) o.b = std::make_unique<Tensor>(test::device_tensor(device(), dt, {rows}, o.bv, "bias"));
    test::poison(device(), o.y);
    return o;
  }

  // y = act(x · w^T + bias) + residual for x [lead..., K], w [N, K]; checks every element.
  void check(const std::vector<int64_t>& lead, int64_t K, int64_t N, bool with_bias, bool with_residual, Epilogue act) {
    const DType dt = GetParam().dtype;
    const uint64_t seed = test::test_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + " (Z123_TEST_SEED), K " + std::to_string(K) + ", N " +
                 std::to_string(N));
    const float wscale = 1.0f / std::sqrt(static_cast<float>(std::max<int64_t>(K, 1)));
    Operands o = operands(lead, K, N, N, with_bias, wscale, seed);
    const int64_t M = o.M;
    std::vector<float> rv;
    std::unique_ptr<Tensor> r;
    if (with_residual) {
      rv = test::as_stored(test::random_uniform(M * N, seed + 3, -1, 1), dt);
      r = std::make_unique<Tensor>(test::device_tensor(device(), dt, o.y.shape, rv, "residual"));
    }

    vk::Recording rec(device());
    kernels::linear(*kernels_, rec, o.x, o.w, o.b.get(), o.y, act, r.get());
    rec.finish();
    device().run(rec);

    auto ref = test::reference_linear(o.xv, o.wv, o.bv, rv, M, N, K, act);
    std::vector<double> abs_products;
    const bool fp16_sums = kernels::detail::gemm_sums_fp16_products(*kernels_, dt, static_cast<uint32_t>(N), false);
    if (fp16_sums)
      abs_products =
          test::reference_linear(test::abs_values(o.xv), test::abs_values(o.wv), {}, {}, M, N, K, Epilogue::None);
    EXPECT_TRUE(test::gemm_close(download(device(), o.y), ref, dt, fp16_sums ? &abs_products : nullptr));
  }

  // y = value * gelu(gate) with [value | gate] = x · w^T + bias, w [2F, K] (linear_geglu), against
  // the float64 reference; where the route has no fused kernel, linear_geglu must refuse.
  void check_geglu(const std::vector<int64_t>& lead, int64_t K, int64_t F, bool with_bias) {
    const DType dt = GetParam().dtype;
    const uint64_t seed = test::test_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + " (Z123_TEST_SEED), K " + std::to_string(K) + ", F " +
                 std::to_string(F));
    Operands o = operands(lead, K, 2 * F, F, with_bias, 2.0f / std::sqrt(static_cast<float>(K)), seed);
    const int64_t M = o.M;
    vk::Recording rec(device());
    if (!kernels::linear_geglu_fuses(*kernels_, dt, 2 * F)) {
      EXPECT_THROW(kernels::linear_geglu(*kernels_, rec, o.x, o.w, o.b.get(), o.y), Error);
      return;
    }
    kernels::linear_geglu(*kernels_, rec, o.x, o.w, o.b.get(), o.y);
    rec.finish();
    device().run(rec);
    auto proj = test::reference_linear(o.xv, o.wv, o.bv, {}, M, 2 * F, K, Epilogue::None);
    std::vector<double> ref(static_cast<size_t>(M * F));
    for (int64_t m = 0; m < M; ++m)
      for (int64_t f = 0; f < F; ++f)
        ref[size_t(m * F + f)] =
            proj[size_t(m * 2 * F + f)] * test::reference_activation(proj[size_t(m * 2 * F + F + f)], Epilogue::Gelu);
    EXPECT_TRUE(test::gemm_close(download(device(), o.y), ref, dt, nullptr));
  }

  // y = act(LayerNorm(x) · w^T + bias), or its GEGLU form (F = N / 2 outputs), with the norm applied
  // inside the GEMM (NormalizedInput) from the row statistics that the GEMM which wrote x left
  // (RowStats): x = x0 · w0^T + b0, its rows centred at `center` (b0's common offset, which the
  // statistics must not cancel on). w and bias stand for the weights with gamma and beta folded in
  // (as the device holds them), colsum their row sums. The reference normalizes x as stored, in
  // double; the statistics' parts are checked against x's too. Where the route cannot write the
  // statistics (linear_row_stats_cols) or merge them (linear_normalizes), linear() must refuse.
  void check_normalized(const std::vector<int64_t>& lead, int64_t K, int64_t N, bool with_bias, bool geglu,
                        float center) {
    const DType dt = GetParam().dtype;
    const uint64_t seed = test::test_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + " (Z123_TEST_SEED), K " + std::to_string(K) + ", N " +
                 std::to_string(N) + (geglu ? " GEGLU" : "") + ", centre " + std::to_string(center));
    const int64_t cols = geglu ? N / 2 : N;
    Operands o = operands(lead, K, N, cols, with_bias, 1.0f / std::sqrt(static_cast<float>(K)), seed);
    const int64_t M = o.M;
    // The producer: x [M, K] = x0 [M, K0] · w0^T + b0, written with its row statistics.
    const int64_t K0 = 24;
    std::vector<float> b0v = test::random_uniform(K, seed + 7, -0.5f, 0.5f);
    for (float& v : b0v) v += center;
    std::vector<int64_t> x0_shape = lead;
    x0_shape.push_back(K0);
    Tensor x0 = test::device_tensor(device(), dt, x0_shape,
                                    test::as_stored(test::random_uniform(M * K0, seed + 5, -1, 1), dt), "x0");
    Tensor w0 = test::device_tensor(device(), dt, {K, K0},
                                    test::as_stored(test::random_uniform(K * K0, seed + 6, -0.2f, 0.2f), dt), "w0");
    Tensor b0 = test::device_tensor(device(), dt, {K}, test::as_stored(b0v, dt), "b0");
    o.x = make_tensor(device(), dt, o.x.shape, "x");
    test::poison(device(), o.x);
    const uint32_t part_cols = kernels::linear_row_stats_cols(*kernels_, dt, K);
    Tensor parts =
        make_tensor(device(), DType::F32, kernels::row_stats_shape(M, K, part_cols ? part_cols : 8), "parts");
    test::poison(device(), parts);
    vk::Recording rec(device());
    if (part_cols == 0) { // no kernel here writes them
      const kernels::RowStats any{&parts, 8};
      EXPECT_THROW(kernels::linear(*kernels_, rec, x0, w0, &b0, o.x, Epilogue::None, nullptr, nullptr, &any), Error);
      EXPECT_EQ(rec.dispatch_count(), 0u);
      return;
    }
    const kernels::RowStats stats{&parts, part_cols};
    kernels::linear(*kernels_, rec, x0, w0, &b0, o.x, Epilogue::None, nullptr, nullptr, &stats);
    std::vector<float> colsum(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += o.wv[size_t(n * K + k)];
      colsum[size_t(n)] = static_cast<float>(acc);
    }
    Tensor cs = test::device_tensor(device(), DType::F32, {N}, colsum, "colsum");
    const kernels::NormalizedInput norm{&cs, 1e-5f, stats};

    const auto record = [&] {
      if (geglu)
        kernels::linear_geglu(*kernels_, rec, o.x, o.w, o.b.get(), o.y, &norm);
      else
        kernels::linear(*kernels_, rec, o.x, o.w, o.b.get(), o.y, Epilogue::Gelu, nullptr, &norm);
    };
    if (!kernels::linear_normalizes(*kernels_, dt, N, K)) {
      EXPECT_THROW(record(), Error);
      EXPECT_EQ(rec.dispatch_count(), 1u); // the producer's alone
      return;
    }
    record();
    rec.finish();
    device().run(rec);
    o.xv = download(device(), o.x);

    // The parts against x's, as stored: each run of part_cols values' mean and M2.
    std::vector<double> part_ref;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t j = 0; j < K / part_cols; ++j) {
        const float* v = &o.xv[size_t(m * K + j * part_cols)];
        double mean = 0, m2 = 0;
        for (uint32_t e = 0; e < part_cols; ++e) mean += v[e];
        mean /= part_cols;
        for (uint32_t e = 0; e < part_cols; ++e) m2 += (v[e] - mean) * (v[e] - mean);
        part_ref.push_back(mean);
        part_ref.push_back(m2);
      }
    // fp32 sums of part_cols values of magnitude ~|center|: a few ulps of the largest.
    EXPECT_TRUE(
        test::all_close(download(device(), parts), part_ref, 4e-6 * part_cols * (1.0 + std::fabs(center)), 1e-4))
        << "row statistics";

    std::vector<float> normed(o.xv.size());
    std::vector<double> rstds(static_cast<size_t>(M));
    for (int64_t m = 0; m < M; ++m) {
      double mean = 0, var = 0;
      for (int64_t k = 0; k < K; ++k) mean += o.xv[size_t(m * K + k)];
      mean /= double(K);
      for (int64_t k = 0; k < K; ++k) var += (o.xv[size_t(m * K + k)] - mean) * (o.xv[size_t(m * K + k)] - mean);
      const double rstd = 1.0 / std::sqrt(var / double(K) + 1e-5);
      rstds[size_t(m)] = rstd;
      for (int64_t k = 0; k < K; ++k)
        normed[size_t(m * K + k)] = static_cast<float>((o.xv[size_t(m * K + k)] - mean) * rstd);
    }
    // The kernel sums x itself, not x normalized, in fp32 and subtracts mean * colsum after: its
    // rounding grows with rstd * sum |x w| (a large common offset makes that sum large) where the
    // unfused GEMM's grows with sum |x^ w|. Bound per output: 2 K u32 rstd sum_k |x_mk w_nk|
    // (recursive fp32 summation, u32 = 2^-24, and as much again for mean * colsum), times the
    // activation's slope (1.2 bounds GELU's).
    auto abs_sums =
        test::reference_linear(test::abs_values(o.xv), test::abs_values(o.wv), {}, {}, M, N, K, Epilogue::None);
    const double slope = 1.2, u32 = std::ldexp(1.0, -24);
    const auto bound_at = [&](int64_t m, int64_t n) {
      return 2.0 * double(K) * u32 * rstds[size_t(m)] * abs_sums[size_t(m * N + n)];
    };
    std::vector<double> ref, bound;
    if (geglu) {
      auto proj = test::reference_linear(normed, o.wv, o.bv, {}, M, N, K, Epilogue::None);
      for (int64_t m = 0; m < M; ++m)
        for (int64_t f = 0; f < cols; ++f) {
          const double v = proj[size_t(m * N + f)], g = proj[size_t(m * N + cols + f)];
          const double gelu = test::reference_activation(g, Epilogue::Gelu);
          ref.push_back(v * gelu);
          bound.push_back(bound_at(m, f) * std::fabs(gelu) + std::fabs(v) * slope * bound_at(m, cols + f));
        }
    } else {
      ref = test::reference_linear(normed, o.wv, o.bv, {}, M, N, K, Epilogue::Gelu);
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) bound.push_back(slope * bound_at(m, n));
    }
    const test::Tolerance tol = test::gemm_tolerance(dt);
    EXPECT_TRUE(test::all_close(download(device(), o.y), ref, tol.atol, tol.rtol, bound));
  }
};

} // namespace

// The input LayerNorm inside the GEMM (NormalizedInput) from the statistics its producer wrote
// (RowStats): several row and column tiles and a large common offset, K a multiple of 32 but not
// of 64, no bias, one K step, the UNet's level-0 width, the GEGLU epilogue, and parts of 8 columns
// that only the plain kernel writes.
TEST_P(Linear, NormalizedInput) {
  Tuning t = device().tuning();
  t.gemm_layer_norm = true; // Z123_GEMM_LN=1: off by default
  use_tuning(t);
  check_normalized({2, 50}, 128, 72, true, false, 0.0f);
  check_normalized({300}, 64, 260, false, false, 20.0f);
  check_normalized({37}, 96, 33, true, false, 1.0f);
  check_normalized({2, 9}, 320, 40, true, false, -3.0f);
  check_normalized({2, 70}, 128, 96, true, true, 0.5f);
  check_normalized({150}, 64, 64, false, true, 8.0f);
  check_normalized({3, 11}, 40, 24, true, false, 2.0f); // parts of 8 only: the cooperative-matrix kernels refuse
}

// Where no kernel gathers row statistics the route says so, and linear() refuses: the tiled
// portable kernel, and every kernel with Tuning::gemm_layer_norm off (the default).
TEST_P(Linear, NormalizedInputRefusedWithoutAKernelForIt) {
  const DType dt = GetParam().dtype;
  for_each_tiled_portable_config([&] {
    Tuning t = kernels_->tuning();
    t.gemm_layer_norm = true;
    use_tuning(t);
    EXPECT_FALSE(kernels::linear_normalizes(*kernels_, dt, 72, 128) &&
                 kernels::detail::gemm_uses_tiled_portable(*kernels_, dt, 72, false));
    check_normalized({2, 50}, 128, 72, true, false, 0.0f);
  });
  Tuning t = device().tuning();
  t.gemm_layer_norm = false;
  use_tuning(t);
  EXPECT_FALSE(kernels::linear_normalizes(*kernels_, dt, 72, 128));
  EXPECT_EQ(kernels::linear_row_stats_cols(*kernels_, dt, 128), 0u);
  check_normalized({2, 50}, 128, 72, true, false, 0.0f);
  // The GEMM after the norm refuses too, even given statistics.
  Tensor x = make_tensor(device(), dt, {4, 64}, "x"), w = make_tensor(device(), dt, {8, 64}, "w");
  Tensor y = make_tensor(device(), dt, {4, 8}, "y"), cs = make_tensor(device(), DType::F32, {8}, "colsum");
  Tensor parts = make_tensor(device(), DType::F32, kernels::row_stats_shape(4, 64, 8), "parts");
  const kernels::NormalizedInput norm{&cs, 1e-5f, {&parts, 8}};
  vk::Recording rec(device());
  EXPECT_THROW(kernels::linear(*kernels_, rec, x, w, nullptr, y, Epilogue::None, nullptr, &norm), Error);
}

// GEGLU in the projection's epilogue: element-wise loads (K odd), several column tiles with a
// partial last one, no bias, and more rows than one tile at a wider F (the UNet's 1,280 would be
// slow on lavapipe; F 160 keeps its 32-column runs).
TEST_P(Linear, GegluOddK) { check_geglu({37}, 45, 32, true); }
TEST_P(Linear, GegluPartialColumnTile) { check_geglu({2, 70}, 96, 144, true); }
TEST_P(Linear, GegluWithoutBias) { check_geglu({300}, 64, 48, false); }
TEST_P(Linear, GegluManyRows) { check_geglu({2, 150}, 64, 160, true); }
// F % 16 != 0: no fused kernel pairs those columns; linear_geglu refuses on every route.
TEST_P(Linear, GegluRefusesUnpairedWidth) {
  const DType dt = GetParam().dtype;
  EXPECT_FALSE(kernels::linear_geglu_fuses(*kernels_, dt, 2 * 24));
  check_geglu({5}, 16, 24, true);
}

TEST_P(Linear, PlainOddShape) { check({37}, 45, 29, false, false, Epilogue::None); }
TEST_P(Linear, BiasLeadingDims) { check({2, 3, 17}, 64, 40, true, false, Epilogue::None); }
TEST_P(Linear, BiasAndResidual) { check({2, 50}, 96, 72, true, true, Epilogue::None); }
TEST_P(Linear, ResidualWithoutBias) { check({3, 11}, 24, 16, false, true, Epilogue::None); }
TEST_P(Linear, GeluSmallKNarrowN) { check({33}, 27, 3, true, false, Epilogue::Gelu); }
TEST_P(Linear, GeluWide) { check({2, 21}, 40, 130, true, false, Epilogue::Gelu); }
TEST_P(Linear, N7) { check({45}, 33, 7, true, true, Epilogue::None); }
TEST_P(Linear, SiluResidualN4) { check({19}, 20, 4, true, true, Epilogue::Silu); }
// Several coopmat tiles in M and N, K a multiple of 8 but not of the 32-deep K step.
// N a multiple of 64, not of 128 (the UNet's level 0): the last 128-wide column tile is half used.
TEST_P(Linear, Width64TilesN320) { check({2, 150}, 96, 320, true, true, Epilogue::Gelu); }
TEST_P(Linear, MultiTile) { check({300}, 136, 260, true, true, Epilogue::None); }
// Time-embedding shape: few rows, K % 8 == 0.
TEST_P(Linear, FewRows) { check({2}, 320, 1280, true, false, Epilogue::Silu); }
TEST_P(Linear, SingleColumnAndRow) { check({1}, 1, 1, true, false, Epilogue::None); }
// The coopmat2 kernel's 128 x 256 tiles (pinned; chosen by size otherwise): a partial second
// tile in N, K of three whole 64-deep steps plus a partial one, every epilogue.
TEST_P(Linear, WideTilesPartialKStep) {
  Tuning wide = device().tuning();
  wide.gemm_cm2_tile_n = 256;
  use_tuning(wide);
  check({3, 70}, 200, 300, true, true, Epilogue::Gelu);
  check({2, 33}, 136, 264, false, true, Epilogue::Silu);
}
// K odd (rows not 16-byte aligned: tensor loads of unaligned rows), N just above the narrow
// kernels' limit of 16.
TEST_P(Linear, OddKJustWiderThanNarrow) { check({2, 65}, 453, 17, true, true, Epilogue::Silu); }
// Few output tiles and a long K: the coopmat kernels split K (2 tiles -> 10 ranges of 320 with a
// partial last one; 2 tiles with K % 8 != 0 -> 3 ranges of 384) and a second kernel sums the ranges and
// applies the epilogue. On the portable path these are plain GEMMs.
TEST_P(Linear, SplitKFewTilesLongK) {
  check({40}, 3000, 200, true, true, Epilogue::Gelu);
  check({2, 3}, 1001, 130, false, true, Epilogue::Silu);
}

namespace {
// Forces the portable kernel's split-K count on any device while it lives (the rule again after).
struct ForcedPortableSplits {
  explicit ForcedPortableSplits(uint32_t splits) { kernels::detail::force_portable_split_k_for_testing(splits); }
  ~ForcedPortableSplits() { kernels::detail::force_portable_split_k_for_testing(0); }
  ForcedPortableSplits(const ForcedPortableSplits&) = delete;
  ForcedPortableSplits& operator=(const ForcedPortableSplits&) = delete;
};

// Two independent products of one input, y1 = x w1ᵀ and y2 = x w2ᵀ, K = 1024 (the tests of what
// orders them).
struct TwoProducts {
  Tensor x, w1, w2, y1, y2;
};
TwoProducts two_products(vk::Device& device, DType dt, int64_t rows, int64_t n1, int64_t n2) {
  return {make_tensor(device, dt, {rows, 1024}, "x"), make_tensor(device, dt, {n1, 1024}, "w1"),
          make_tensor(device, dt, {n2, 1024}, "w2"), make_tensor(device, dt, {rows, n1}, "y1"),
          make_tensor(device, dt, {rows, n2}, "y2")};
}
} // namespace

// The portable kernel's split K (the rule takes it on GPUs with few output tiles; forced here so
// lavapipe covers it too): 3 ranges of K = 1001 (two of 384 and a partial one, 4-wide loads off
// since K % 4 != 0), and 5 of K = 3000 with 4-wide loads, epilogues applied by the reduction.
TEST_P(Linear, PortableSplitKForced) {
  ForcedPortableSplits force(3);
  check({2, 3}, 1001, 130, false, true, Epilogue::Silu);
  kernels::detail::force_portable_split_k_for_testing(5);
  check({40}, 3000, 9, true, true, Epilogue::Gelu);
  if (kernels_->matmul_path() == kernels::Path::Portable) { // two dispatches: partial sums, reduction
    Tensor x = make_tensor(device(), GetParam().dtype, {40, 3000}, "x");
    Tensor w = make_tensor(device(), GetParam().dtype, {9, 3000}, "w");
    Tensor y = make_tensor(device(), GetParam().dtype, {40, 9}, "y");
    vk::Recording rec(device());
    kernels::linear(*kernels_, rec, x, w, nullptr, y);
    EXPECT_EQ(rec.dispatch_count(), 2u);
  }
}

// kernels::WholeK: split K (forced for the portable kernel; the v1/KHR cooperative-matrix kernels
// split one row by their rule) orders two independent one-row products by barriers, as they share the
// partial-sum scratch; with K whole nothing orders them, and the sums still match the reference.
TEST_P(Linear, WholeKLeavesIndependentProductsUnordered) {
  ForcedPortableSplits force(3);
  const TwoProducts t = two_products(device(), GetParam().dtype, 1, 256, 320);
  auto barriers = [&](bool whole) {
    vk::Recording rec(device());
    std::optional<kernels::WholeK> scope;
    if (whole) scope.emplace(*kernels_);
    kernels::linear(*kernels_, rec, t.x, t.w1, nullptr, t.y1);
    kernels::linear(*kernels_, rec, t.x, t.w2, nullptr, t.y2);
    return rec.barrier_count();
  };
  // The NV coopmat2 kernel never splits K: nothing to order there, with or without.
  const bool splits = kernels_->matmul_path() != kernels::Path::NvCoopMat2;
  EXPECT_EQ(barriers(false) > 0, splits);
  EXPECT_EQ(barriers(true), 0u);
  EXPECT_FALSE(kernels_->whole_k()); // the scope ended
  kernels::WholeK whole(*kernels_);
  check({1}, 1280, 320, true, true, Epilogue::Silu);
}

// kernels::SplitKLane: two independent split-K products (partial sums, then their reduction) in
// one scratch lane are chained, in a recording ordered by levels: the second one's partial sums
// overwrite what the first one's reduction reads, so four levels (three barriers). In lanes of
// their own they run side by side: two levels, one barrier. The sums still match the reference,
// and the lane returns to the previous one when the scope ends.
TEST_P(Linear, SplitKLanesLeaveTwoChainsUnordered) {
  ForcedPortableSplits force(3);
  // The larger product first: a lane's scratch only grows into a new buffer for a larger one.
  const TwoProducts t = two_products(device(), GetParam().dtype, 2, 320, 256);
  auto barriers = [&](uint32_t second_lane) {
    vk::Recording rec(device());
    rec.order_by_levels();
    kernels::linear(*kernels_, rec, t.x, t.w1, nullptr, t.y1);
    {
      kernels::SplitKLane lane(*kernels_, second_lane);
      kernels::linear(*kernels_, rec, t.x, t.w2, nullptr, t.y2);
    }
    rec.finish();
    return rec.barrier_count();
  };
  if (kernels_->matmul_path() == kernels::Path::NvCoopMat2) { // never splits K: nothing to chain
    EXPECT_EQ(barriers(0), 0u);
  } else {
    EXPECT_EQ(barriers(0), 3u);
    EXPECT_EQ(barriers(1), 1u);
  }
  EXPECT_EQ(kernels_->splitk_lane(), 0u); // the scopes ended
  kernels::SplitKLane lane(*kernels_, 2);
  check({2}, 1280, 320, true, true, Epilogue::Silu);
}

// The tiled portable kernel (gemm_tiled.comp: fp16 on GPUs; forced here so lavapipe covers it),
// with packed fp16 products and with fp32 ones: partial tiles in M and N, K % 8 != 0
// (element-wise gathers) and K % 16 != 0 with 16-byte loads, a multi-tile problem, and few tiles
// with a long K (split K, epilogue in the reduction).
TEST_P(Linear, TiledPortableKernel) {
  for_each_tiled_portable_config([&] {
    check({37}, 45, 33, true, false, Epilogue::Gelu);
    check({2, 50}, 96, 72, true, true, Epilogue::None);
    check({300}, 136, 260, true, true, Epilogue::Silu);
    check({40}, 3000, 200, true, true, Epilogue::Gelu);
  });
}

// Every Z123_GEMM_FIXED_GEOMETRY mode (for_each_fixed_geometry): K % 8 != 0, a K tail past the
// last K step, a multi-tile problem, and few tiles with a long K (split K).
TEST_P(Linear, EveryFixedGeometry) {
  for_each_fixed_geometry([&] {
    check({37}, 45, 33, true, false, Epilogue::Gelu);
    check({300}, 136, 260, true, true, Epilogue::Silu);
    check({40}, 3000, 200, true, true, Epilogue::Gelu);
  });
}

// Every KHR tiling (for_each_khr_tiling; the rule picks some only at a model's sizes): partial
// row and column tiles past a whole 128 x 256 tile, the GELU and GEGLU epilogues with bias and
// residual, and the row statistics written and read (the LayerNorm inside the GEMMs).
TEST_P(Linear, EveryKhrTiling) {
  for_each_khr_tiling([&] {
    check({300}, 136, 260, true, true, Epilogue::None);
    check({2, 150}, 96, 320, true, true, Epilogue::Gelu);
    check_geglu({2, 150}, 64, 160, true);
    Tuning t = device().tuning();
    t.gemm_tile = kernels_->tuning().gemm_tile;
    t.gemm_layer_norm = true;
    use_tuning(t);
    check_normalized({300}, 64, 260, false, false, 20.0f);
    check_normalized({2, 70}, 128, 96, true, true, 0.5f);
  });
}

INSTANTIATE_TEST_SUITE_P(Gemm, Linear, ::testing::ValuesIn(test::gemm_test_cases()),
                         [](const auto& param_info) { return test::gemm_case_name(param_info.param); });

class LinearArgs : public test::VkTest {};

namespace {
template <class F>
void expect_invalid(F&& f, const char* what) {
  try {
    f();
    ADD_FAILURE() << what << ": no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << what << ": " << e.what();
  }
}
} // namespace

TEST_F(LinearArgs, WrongShapesAndDtypesThrowInvalidArgument) {
  kernels::Kernels k(device());
  vk::Recording rec(device());
  Tensor x = make_tensor(device(), DType::F32, {4, 8}, "x");
  Tensor w = make_tensor(device(), DType::F32, {6, 8}, "w");
  Tensor y = make_tensor(device(), DType::F32, {4, 6}, "y");
  Tensor b = make_tensor(device(), DType::F32, {6}, "b");
  Tensor w_bad = make_tensor(device(), DType::F32, {6, 7}, "w_bad");
  Tensor w_3d = make_tensor(device(), DType::F32, {6, 8, 1}, "w_3d");
  Tensor y_bad = make_tensor(device(), DType::F32, {4, 5}, "y_bad");
  Tensor b_bad = make_tensor(device(), DType::F32, {5}, "b_bad");
  Tensor y16 = make_tensor(device(), DType::F16, {4, 6}, "y16");
  Tensor sq = make_tensor(device(), DType::F32, {8, 8}, "sq");
  expect_invalid([&] { kernels::linear(k, rec, x, w_bad, nullptr, y); }, "K mismatch");
  expect_invalid([&] { kernels::linear(k, rec, x, w_3d, nullptr, y); }, "3-D weight");
  expect_invalid([&] { kernels::linear(k, rec, x, w, nullptr, y_bad); }, "wrong output shape");
  expect_invalid([&] { kernels::linear(k, rec, x, w, &b_bad, y); }, "wrong bias shape");
  expect_invalid([&] { kernels::linear(k, rec, x, w, nullptr, y, Epilogue::None, &y_bad); }, "wrong residual");
  expect_invalid([&] { kernels::linear(k, rec, x, w, nullptr, y16); }, "dtype mismatch");
  expect_invalid([&] { kernels::linear(k, rec, x, w, &b, x); }, "output shape (and aliasing)");
  expect_invalid([&] { kernels::linear(k, rec, sq, sq, nullptr, sq); }, "output aliases input");
  // The input LayerNorm: column sums of the wrong length or dtype, none, a residual, eps <= 0.
  Tensor cs = make_tensor(device(), DType::F32, {6}, "colsum");
  Tensor cs_bad = make_tensor(device(), DType::F32, {5}, "colsum_bad");
  Tensor cs16 = make_tensor(device(), DType::F16, {6}, "colsum16");
  const kernels::NormalizedInput bad_len{&cs_bad, 1e-5f}, bad_dtype{&cs16, 1e-5f}, none{nullptr, 1e-5f},
      bad_eps{&cs, 0.0f}, good{&cs, 1e-5f};
  for (const auto* n : {&bad_len, &bad_dtype, &none, &bad_eps})
    expect_invalid([&] { kernels::linear(k, rec, x, w, &b, y, Epilogue::None, nullptr, n); }, "bad NormalizedInput");
  Tensor res = make_tensor(device(), DType::F32, {4, 6}, "residual");
  expect_invalid([&] { kernels::linear(k, rec, x, w, &b, y, Epilogue::None, &res, &good); }, "LayerNorm and residual");
  // Its row statistics (x's: [4, 8 / cols, 2] F32): none, parts that do not divide K, the wrong
  // shape or dtype.
  Tensor parts = make_tensor(device(), DType::F32, {4, 1, 2}, "parts");
  Tensor parts_bad = make_tensor(device(), DType::F32, {4, 2, 2}, "parts_bad");
  Tensor parts16 = make_tensor(device(), DType::F16, {4, 1, 2}, "parts16");
  for (const kernels::RowStats& st : {kernels::RowStats{}, kernels::RowStats{&parts, 3},
                                      kernels::RowStats{&parts_bad, 8}, kernels::RowStats{&parts16, 8}}) {
    const kernels::NormalizedInput n{&cs, 1e-5f, st};
    expect_invalid([&] { kernels::linear(k, rec, x, w, &b, y, Epilogue::None, nullptr, &n); }, "bad row statistics");
  }
  EXPECT_EQ(rec.dispatch_count(), 0u);
}

// The output's row statistics (RowStats): parts of the wrong width, shape or dtype are refused as
// invalid; a width no kernel here writes parts for (N % 8 != 0), and any width with
// Tuning::gemm_layer_norm off, as unsupported.
TEST_F(LinearArgs, RowStatsOutRefusals) {
  Tuning t = device().tuning();
  t.gemm_layer_norm = true;
  kernels::Kernels k(device(), t);
  vk::Recording rec(device());
  Tensor x = make_tensor(device(), DType::F32, {4, 8}, "x");
  Tensor w = make_tensor(device(), DType::F32, {16, 8}, "w");
  Tensor y = make_tensor(device(), DType::F32, {4, 16}, "y");
  ASSERT_EQ(kernels::linear_row_stats_cols(k, DType::F32, 16), 8u); // fp32: the plain kernel
  Tensor parts = make_tensor(device(), DType::F32, kernels::row_stats_shape(4, 16, 8), "parts");
  Tensor parts_bad = make_tensor(device(), DType::F32, {4, 1, 2}, "parts_bad");
  Tensor parts16 = make_tensor(device(), DType::F16, kernels::row_stats_shape(4, 16, 8), "parts16");
  for (const kernels::RowStats& st : {kernels::RowStats{}, kernels::RowStats{&parts, 4},
                                      kernels::RowStats{&parts_bad, 8}, kernels::RowStats{&parts16, 8}})
    expect_invalid([&] { kernels::linear(k, rec, x, w, nullptr, y, Epilogue::None, nullptr, nullptr, &st); },
                   "bad row statistics out");
  const auto expect_unsupported = [&](kernels::Kernels& kk, const Tensor& wt, const Tensor& yt, const char* what) {
    const kernels::RowStats st{&parts, 8};
    try {
      kernels::linear(kk, rec, x, wt, nullptr, yt, Epilogue::None, nullptr, nullptr, &st);
      ADD_FAILURE() << what << ": no exception";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << what << ": " << e.what();
    }
  };
  Tensor w12 = make_tensor(device(), DType::F32, {12, 8}, "w12"),
         y12 = make_tensor(device(), DType::F32, {4, 12}, "y12");
  expect_unsupported(k, w12, y12, "N % 8 != 0");
  kernels::Kernels off(device()); // Tuning::gemm_layer_norm as the device has it: off unless Z123_GEMM_LN=1
  if (!device().tuning().gemm_layer_norm) expect_unsupported(off, w, y, "Z123_GEMM_LN off");
  EXPECT_EQ(rec.dispatch_count(), 0u);
}

TEST_F(LinearArgs, CoopMatPathIsTakenOnlyForF16) {
  kernels::Kernels k(device());
  bool any = false;
  for (kernels::Path path : {kernels::Path::NvCoopMat, kernels::Path::KhrCoopMat}) {
    if (!k.path_available(path)) continue;
    any = true;
    SCOPED_TRACE(kernels::path_name(path));
    k.set_matmul_path(path);
    EXPECT_TRUE(kernels::detail::gemm_uses_coopmat(k, DType::F16));
    EXPECT_FALSE(kernels::detail::gemm_uses_coopmat(k, DType::F32));
    k.set_matmul_path(kernels::Path::Portable);
    EXPECT_FALSE(kernels::detail::gemm_uses_coopmat(k, DType::F16));
  }
  if (!any) GTEST_SKIP() << "no NV or KHR cooperative matrix path on this device/build";
}

// The KHR fragment shape: names are unique and the measured 16x16x16 comes first; a mistyped
// Z123_COOPMAT_SHAPE is refused on any device; where the KHR path runs, the shape chosen is one the
// device lists, and forcing each built shape picks it exactly where the device lists it.
TEST_F(LinearArgs, CoopmatShapeChoiceAndOverride) {
  const auto& shapes = kernels::khr_gemm_shapes();
  ASSERT_FALSE(shapes.empty());
  EXPECT_EQ(kernels::shape_name(shapes[0]), "16x16x16");
  for (size_t i = 0; i < shapes.size(); ++i)
    for (size_t j = i + 1; j < shapes.size(); ++j)
      EXPECT_NE(kernels::shape_name(shapes[i]), kernels::shape_name(shapes[j]));
  Tuning bad = device().tuning();
  bad.coopmat_shape = "16x16x17";
  EXPECT_THROW(kernels::Kernels k(device(), bad), Error);

  kernels::Kernels k(device());
  if (!k.path_available(kernels::Path::KhrCoopMat)) GTEST_SKIP() << "no KHR cooperative matrix path here";
  const auto& info = device().info();
  auto listed = [&](const kernels::CoopmatShape& s) {
    return info.has_coopmat_shape(s.m, s.n, s.k, 0, 0, 1, 1) && info.can_require_subgroup_size(s.subgroup);
  };
  ASSERT_NE(k.khr_gemm_shape(), nullptr);
  EXPECT_TRUE(listed(*k.khr_gemm_shape()));
  for (const auto& s : shapes) {
    SCOPED_TRACE(kernels::shape_name(s));
    Tuning pinned = device().tuning();
    pinned.coopmat_shape = kernels::shape_name(s);
    if (listed(s)) {
      kernels::Kernels forced(device(), pinned);
      ASSERT_NE(forced.khr_gemm_shape(), nullptr);
      EXPECT_EQ(kernels::shape_name(*forced.khr_gemm_shape()), kernels::shape_name(s));
    } else {
      EXPECT_THROW(kernels::Kernels forced(device(), pinned), Error);
    }
  }
}

// Emulated cooperative matrices: Intel integrated GPUs listing only 8x8x16 (Xe-LP, Meteor Lake)
// keep the portable kernels; Xe2 (8x16x16), Intel discrete (Arc) and other vendors do not.
TEST(CoopmatShapes, EmulatedOnlyOnIntelIntegratedBeforeXe2) {
  vk::DeviceInfo info;
  info.vendor_id = 0x8086;
  info.type = VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
  vk::CoopMatShape s8816;
  s8816.m = 8, s8816.n = 8, s8816.k = 16, s8816.c_type = 1, s8816.result_type = 1, s8816.subgroup_scope = true;
  info.coopmat_shapes = {s8816};
  EXPECT_TRUE(kernels::coopmat_emulated(info)); // Raptor Lake Iris Xe, Meteor Lake
  vk::CoopMatShape s81616 = s8816;
  s81616.n = 16;
  info.coopmat_shapes.push_back(s81616);
  EXPECT_FALSE(kernels::coopmat_emulated(info)); // Lunar Lake (Xe2)
  info.coopmat_shapes = {s8816};
  info.type = VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  EXPECT_FALSE(kernels::coopmat_emulated(info)); // Arc A770: XMX units
  info.type = VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
  info.vendor_id = 0x1002;
  EXPECT_FALSE(kernels::coopmat_emulated(info)); // an AMD APU
}

// Packed fp16 products in the tiled portable GEMM by default everywhere but on NVIDIA GPUs that
// list no cooperative matrix (Pascal's fp16 runs at 1/64 of its fp32 rate).
TEST(PortableProducts, PackedExceptOnNvidiaWithoutCooperativeMatrices) {
  vk::DeviceInfo info;
  info.vendor_id = 0x10DE;
  EXPECT_FALSE(kernels::packed_fp16_products_by_default(info)); // GTX 1080
  info.khr_coopmat = true;
  EXPECT_TRUE(kernels::packed_fp16_products_by_default(info)); // RTX / H100, with Z123_FORCE_PORTABLE
  info.khr_coopmat = false;
  info.nv_coopmat = true;
  EXPECT_TRUE(kernels::packed_fp16_products_by_default(info));            // an older driver: NV extension only
  for (uint32_t vendor : {0x1002u, 0x8086u, 0x13B5u, 0x5143u, 0x106Bu}) { // AMD, Intel, ARM, Qualcomm, Apple
    vk::DeviceInfo other;
    other.vendor_id = vendor;
    EXPECT_TRUE(kernels::packed_fp16_products_by_default(other)) << std::hex << vendor;
  }
}

// The coopmat kernels split K only when few output tiles would run: two dispatches (GEMM into
// partial sums, then the reduction with the epilogue) for 40 x 3000 x 200 (2 tiles), one for
// 4000 x 3000 x 1280 (320 tiles).
TEST_F(LinearArgs, CoopMatSplitsKOnlyForFewTiles) {
  kernels::Kernels k(device());
  bool any = false;
  for (kernels::Path path : {kernels::Path::NvCoopMat, kernels::Path::KhrCoopMat}) {
    if (!k.path_available(path)) continue;
    any = true;
    SCOPED_TRACE(kernels::path_name(path));
    k.set_matmul_path(path);
    auto dispatches = [&](int64_t M, int64_t N) {
      Tensor x = make_tensor(device(), DType::F16, {M, 3000}, "x");
      Tensor w = make_tensor(device(), DType::F16, {N, 3000}, "w");
      Tensor y = make_tensor(device(), DType::F16, {M, N}, "y");
      vk::Recording rec(device());
      kernels::linear(k, rec, x, w, nullptr, y);
      return rec.dispatch_count();
    };
    EXPECT_EQ(dispatches(40, 200), 2u);
    EXPECT_EQ(dispatches(4000, 1280), 1u);
  }
  if (!any) GTEST_SKIP() << "no NV or KHR cooperative matrix path on this device/build";
}

// Path::NvCoopMat2 takes fp16 problems wider than 16 columns; the narrower ones go to the v1
// kernel's 128 x 16 tiles.
TEST_F(LinearArgs, CoopMat2TakesF16WiderThan16) {
  kernels::Kernels k(device());
  if (!k.path_available(kernels::Path::NvCoopMat2)) GTEST_SKIP() << "no NV cooperative matrix 2 on this device";
  k.set_matmul_path(kernels::Path::NvCoopMat2);
  EXPECT_TRUE(kernels::detail::gemm_uses_coopmat2(k, DType::F16, 17));
  EXPECT_FALSE(kernels::detail::gemm_uses_coopmat2(k, DType::F16, 16));
  EXPECT_FALSE(kernels::detail::gemm_uses_coopmat2(k, DType::F32, 320));
  EXPECT_EQ(kernels::detail::gemm_uses_coopmat(k, DType::F16), k.path_available(kernels::Path::NvCoopMat));
  k.set_matmul_path(kernels::Path::NvCoopMat);
  EXPECT_FALSE(kernels::detail::gemm_uses_coopmat2(k, DType::F16, 320));
}

// More row tiles than one grid dimension may hold spill into grid z. Real sizes never reach
// 65535 tiles cheaply, so the limit is lowered to 3 here; the kernels see exactly what a huge
// problem would give them (tile = y + z * groups_y, with idle tail groups).
TEST_P(Linear, RowTilesSpillIntoGridZ) {
  struct Limit {
    Limit() { kernels::detail::set_max_grid_rows_for_testing(3); }
    ~Limit() { kernels::detail::set_max_grid_rows_for_testing(0); }
  } limit;
  // 20 row tiles of 64 (portable, grid 3 x 7) or 10 of 128 (coopmat, 3 x 4): idle tail groups too.
  check({1250}, 24, 20, true, false, Epilogue::None);
}

// The split-K count by waves over the SMs (one default workgroup per SM), on the UNet's split
// shapes on an H100 (132 SMs; bench/NOTES.md session 15) and the count rule's choices there:
// whole waves, fewer ranges on ties, the rule itself where the SM count is unknown.
TEST(GemmTiles, SplitKFillsWholeWaves) {
  using kernels::detail::choose_split_k_by_waves;
  EXPECT_EQ(choose_split_k_by_waves(40, 11520, 7, 132), 3u);   // 512 x 1280: 280 groups in 3 waves -> 120 in 1
  EXPECT_EQ(choose_split_k_by_waves(30, 11520, 9, 132), 4u);   // 300 x 1280: 270 in 3 -> 120 in 1
  EXPECT_EQ(choose_split_k_by_waves(10, 11520, 15, 132), 13u); // 128 x 1280: 150 in 2 -> 130 in 1
  EXPECT_EQ(choose_split_k_by_waves(10, 23040, 16, 132), 13u); // 160 in 2 -> 130 in 1
  EXPECT_EQ(choose_split_k_by_waves(10, 11520, 15, 0), 15u);   // SM count unknown: the rule
  EXPECT_EQ(choose_split_k_by_waves(40, 11520, 1, 132), 1u);   // the rule does not split: neither
  EXPECT_EQ(choose_split_k_by_waves(10, 600, 2, 132), 2u);     // K allows two ranges only
}

// The KHR tile choice by waves over the SMs, on the shapes it was measured on (an H100, 132 SMs,
// bench/NOTES.md session 5): small tiles where they save waves, not where the default already
// fills its waves or M is short; 64 x 128 always at N <= 128; 128 x 64 at the level-0 N = 320;
// never when the SM count is unknown.
TEST(GemmTiles, SmallTilesWhereTheyFillWholeWaves) {
  using kernels::detail::choose_khr_tiling;
  using kernels::detail::KhrTiling;
  EXPECT_EQ(choose_khr_tiling(4800, 640, true, 132), KhrTiling::Rows64);     // 190 default tiles: 2 waves -> 1
  EXPECT_EQ(choose_khr_tiling(8192, 320, true, 132), KhrTiling::Rows64);     // 192: 2 waves -> 1
  EXPECT_EQ(choose_khr_tiling(2048, 1280, true, 132), KhrTiling::Rows64);    // 160: 2 waves -> 1
  EXPECT_EQ(choose_khr_tiling(19200, 640, true, 132), KhrTiling::Rows64);    // 750: 6 waves -> 4
  EXPECT_EQ(choose_khr_tiling(19200, 320, true, 132), KhrTiling::Cols64);    // 450: 4 waves -> 2, no padding
  EXPECT_EQ(choose_khr_tiling(19200, 320, false, 132), KhrTiling::Cols64);   // the same for linear layers
  EXPECT_EQ(choose_khr_tiling(2048, 640, true, 132), KhrTiling::Default);    // 80: one wave either way
  EXPECT_EQ(choose_khr_tiling(19200, 2560, false, 132), KhrTiling::Default); // 3,000: full waves already
  EXPECT_EQ(choose_khr_tiling(512, 10240, false, 132), KhrTiling::Default);  // short M
  EXPECT_EQ(choose_khr_tiling(262144, 128, true, 132), KhrTiling::Rows64);   // N <= 128
  EXPECT_EQ(choose_khr_tiling(262144, 128, true, 0), KhrTiling::Default);    // SM count unknown
}

// Where 128 x 128 tiles (on 16 subgroups) take over from the 64 x 128 ones the waves rule picked:
// two or more waves of them (bench/NOTES.md session 16, run 4).
TEST(GemmTiles, SquareTilesWhereTheyMakeTwoWaves) {
  using kernels::detail::khr_square_tiles_win;
  EXPECT_FALSE(khr_square_tiles_win(4800, 640, 132));  // 190 tiles: 1.4 waves, 64 x 128 stays
  EXPECT_FALSE(khr_square_tiles_win(2048, 1280, 132)); // 160
  EXPECT_FALSE(khr_square_tiles_win(8192, 320, 132));  // 192
  EXPECT_TRUE(khr_square_tiles_win(8192, 640, 132));   // 320: 2.4 waves
  EXPECT_TRUE(khr_square_tiles_win(19200, 640, 132));  // 750
  EXPECT_TRUE(khr_square_tiles_win(4800, 1280, 132));  // 380
  EXPECT_TRUE(khr_square_tiles_win(614400, 128, 132)); // the VAE decoder's N = 128 convs
  EXPECT_TRUE(khr_square_tiles_win(33792, 128, 132));  // exactly 264 tiles
  EXPECT_FALSE(khr_square_tiles_win(33664, 128, 132)); // 263
}

// Where 256 x 64 tiles (16 subgroups) take over from the 128 x 64 ones: two or more waves of them
// (bench/NOTES.md session 16, run 10).
TEST(GemmTiles, TallTilesWhereTheyMakeTwoWaves) {
  using kernels::detail::khr_tall_tiles_win;
  EXPECT_TRUE(khr_tall_tiles_win(19200, 320, 132));  // 375 tiles: the level-0 layers
  EXPECT_TRUE(khr_tall_tiles_win(19200, 960, 132));  // 1,125: the fused self-attention projection
  EXPECT_FALSE(khr_tall_tiles_win(4800, 320, 132));  // 95
  EXPECT_FALSE(khr_tall_tiles_win(13312, 320, 132)); // 52 x 5 = 260
  EXPECT_TRUE(khr_tall_tiles_win(13313, 320, 132));  // 53 x 5 = 265
}

// Where 96 x 128 tiles (12 subgroups) take over from the square ones: more row tiles, and their
// waves at 0.88 of a square wave's time take less (bench/NOTES.md session 17, run 7).
TEST(GemmTiles, ShortTilesWhereSquareOnesLeaveSmsIdle) {
  using kernels::detail::khr_short_tiles_win;
  EXPECT_TRUE(khr_short_tiles_win(1200, 1280, 132));   // 100 -> 130 tiles, one wave either way
  EXPECT_TRUE(khr_short_tiles_win(2048, 640, 132));    // 80 -> 110
  EXPECT_TRUE(khr_short_tiles_win(512, 1280, 132));    // 40 -> 60
  EXPECT_TRUE(khr_short_tiles_win(1200, 3840, 132));   // 3 waves either way, each 0.88
  EXPECT_FALSE(khr_short_tiles_win(257, 1280, 132));   // 3 row tiles either way
  EXPECT_FALSE(khr_short_tiles_win(77, 1024, 132));    // 1
  EXPECT_FALSE(khr_short_tiles_win(4800, 1920, 132));  // 5 square waves: more than 3
  EXPECT_FALSE(khr_short_tiles_win(1200, 10240, 132)); // 7
  EXPECT_FALSE(khr_short_tiles_win(614400, 128, 132)); // the VAE decoder
  EXPECT_FALSE(khr_short_tiles_win(1400, 1280, 132));  // 110 -> 150 tiles: 2 waves x 0.88 > 1
  EXPECT_FALSE(khr_short_tiles_win(1200, 1280, 0));    // SM count unknown
}
