// Winograd F(2x2, 3x3) convolutions (kernels/winograd.hpp) and the grouped GEMM under them
// (kernels::linear_grouped), against float64 references that do not use the Winograd algorithm:
// the direct NHWC convolution of reference_gemm.hpp on the checkpoint's [Cout, Cin, 3, 3] weights,
// and per-group products. Outputs poisoned first; every portable GEMM configuration.
//
// Tolerance of a Winograd conv: besides the GEMM's own (gemm_tolerance), the transformed input V
// and weight U, and the products M, are each rounded to the storage type once (u = 2^-11 for
// fp16, 2^-24 for fp32), and packed fp16 sums add kFp16SumGamma; each such error is relative to a
// term of S = sum_xi |A_p,a A_q,b| sum_c |V_xi,c U_xi,c| (computed here in float64 from the
// stored inputs with this file's own transforms), so an output may be off by (3 u + gamma) S. A
// wrong sign or a missing product moves an output by O(|y|): far outside.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "kernels/gemm_dispatch.hpp"
#include "reference_gemm.hpp"
#include "reference_pointwise.hpp"
#include "support/check.hpp"
#include "support/expect_error.hpp"
#include "support/vk_env.hpp"
#include "z123/error.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/kernels/norm.hpp"
#include "z123/kernels/winograd.hpp"
#include "z123/vk/recording.hpp"

using namespace z123;
using kernels::Epilogue;

namespace {

constexpr double kBT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
constexpr double kAT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

struct WinoCase {
  int64_t B, H, W, Cin, Cout;
  int up;
  bool bias, residual;
  // A group norm + SiLU in front, applied by the input transform (kernels::WinogradNorm) from
  // kernels::group_norm_table's statistics; the reference normalizes in float64 first.
  bool norm = false;
};

// The per-output error scale S of the file's header, [B, Ho, Wo, Cout].
std::vector<double> winograd_error_scale(const std::vector<float>& x, const std::vector<float>& w_oihw,
                                         const WinoCase& s) {
  const int64_t Ho = s.H * s.up, Wo = s.W * s.up, th = (Ho + 1) / 2, tw = (Wo + 1) / 2;
  // |U| per (o, xi, c).
  std::vector<double> absu(static_cast<size_t>(s.Cout * 16 * s.Cin));
  for (int64_t o = 0; o < s.Cout; ++o)
    for (int64_t c = 0; c < s.Cin; ++c)
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b) {
          double u = 0;
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) u += kG[a][i] * kG[b][j] * w_oihw[((o * s.Cin + c) * 3 + i) * 3 + j];
          absu[(o * 16 + a * 4 + b) * s.Cin + c] = std::fabs(u);
        }
  std::vector<double> out(static_cast<size_t>(s.B * Ho * Wo * s.Cout), 0.0);
  std::vector<double> absv(static_cast<size_t>(16 * s.Cin));
  for (int64_t bi = 0; bi < s.B; ++bi)
    for (int64_t ty = 0; ty < th; ++ty)
      for (int64_t tx = 0; tx < tw; ++tx) {
        for (int64_t c = 0; c < s.Cin; ++c) {
          double d[4][4];
          for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) {
              const int64_t yy = 2 * ty - 1 + i, xx = 2 * tx - 1 + j;
              d[i][j] = yy >= 0 && yy < Ho && xx >= 0 && xx < Wo
                            ? x[((bi * s.H + yy / s.up) * s.W + xx / s.up) * s.Cin + c]
                            : 0.0;
            }
          for (int a = 0; a < 4; ++a)
            for (int b = 0; b < 4; ++b) {
              double v = 0;
              for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 4; ++j) v += kBT[a][i] * kBT[b][j] * d[i][j];
              absv[(a * 4 + b) * s.Cin + c] = std::fabs(v);
            }
        }
        for (int64_t o = 0; o < s.Cout; ++o) {
          double m[16];
          for (int xi = 0; xi < 16; ++xi) {
            m[xi] = 0;
            for (int64_t c = 0; c < s.Cin; ++c) m[xi] += absv[xi * s.Cin + c] * absu[(o * 16 + xi) * s.Cin + c];
          }
          for (int p = 0; p < 2; ++p)
            for (int q = 0; q < 2; ++q) {
              const int64_t oy = 2 * ty + p, ox = 2 * tx + q;
              if (oy >= Ho || ox >= Wo) continue;
              double e = 0;
              for (int a = 0; a < 4; ++a)
                for (int b = 0; b < 4; ++b) e += std::fabs(kAT[p][a] * kAT[q][b]) * m[a * 4 + b];
              out[((bi * Ho + oy) * Wo + ox) * s.Cout + o] = e;
            }
        }
      }
  return out;
}

class Winograd : public test::GemmPathTest {
protected:
  void SetUp() override {
    test::GemmPathTest::SetUp();
    if (IsSkipped()) return;
    if (!kernels::winograd_runs(*kernels_, GetParam().dtype, 8, 320))
      GTEST_SKIP() << "grouped GEMMs do not run on NV coopmat2's kernel";
  }

  void check(const WinoCase& s) {
    const DType dt = GetParam().dtype;
    const uint64_t seed = test::test_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + " (Z123_TEST_SEED)");
    const float wscale = 1.0f / std::sqrt(static_cast<float>(9 * s.Cin));
    auto xv = test::as_stored(test::random_uniform(s.B * s.H * s.W * s.Cin, seed, -1, 1), dt);
    auto w_oihw = test::as_stored(test::random_uniform(s.Cout * s.Cin * 9, seed + 1, -wscale, wscale), dt);
    std::vector<float> bv, rv;
    if (s.bias) bv = test::as_stored(test::random_uniform(s.Cout, seed + 2, -0.5f, 0.5f), dt);
    const int64_t Ho = s.H * s.up, Wo = s.W * s.up;
    const std::vector<int64_t> ys{s.B, Ho, Wo, s.Cout};
    if (s.residual) rv = test::as_stored(test::random_uniform(s.B * Ho * Wo * s.Cout, seed + 3, -1, 1), dt);
    // With the norm: its output (never rounded to the storage type on the device) is what the
    // conv sees, here in float64 rounded to float32 for the conv reference.
    const int groups = s.Cin >= 32 ? 8 : 2;
    const float eps = 1e-5f;
    std::vector<float> gv, betav, conv_in = xv;
    if (s.norm) {
      gv = test::as_stored(test::random_uniform(s.Cin, seed + 4, 0.5f, 1.5f), dt);
      betav = test::as_stored(test::random_uniform(s.Cin, seed + 5, -0.5f, 0.5f), dt);
      const std::vector<double> n =
          test::pointwise::group_norm(xv, gv, betav, s.B, s.H * s.W, s.Cin, groups, eps, true);
      conv_in.assign(n.begin(), n.end());
    }
    int64_t rho = 0, rwo = 0;
    const test::ConvRefShape rs{s.B, s.H, s.W, s.Cin, s.Cout, 3, 3};
    const kernels::Conv2dParams p{1, 1, 1, 1, 1, s.up};
    std::vector<double> ref = test::reference_conv2d_nhwc(conv_in, w_oihw, bv, rv, rs, p, Epilogue::None, rho, rwo);
    ASSERT_EQ(rho, Ho);
    ASSERT_EQ(rwo, Wo);

    Tensor x = test::device_tensor(device(), dt, {s.B, s.H, s.W, s.Cin}, xv, "x");
    Tensor u = test::device_tensor(device(), dt, {s.Cout, 16, s.Cin},
                                   kernels::conv_weight_to_winograd(w_oihw, s.Cout, s.Cin), "u");
    const kernels::WinogradTiling t = kernels::winograd_tiling(*kernels_, x, s.up, s.Cout);
    EXPECT_EQ(t.tiles, s.B * ((Ho + 1) / 2) * ((Wo + 1) / 2));
    EXPECT_EQ(t.rows % kernels::linear_group_row_align(*kernels_, dt, s.Cout), 0);
    EXPECT_LT(t.rows - t.tiles, kernels::linear_group_row_align(*kernels_, dt, s.Cout));
    Tensor v = make_tensor(device(), dt, {16 * t.rows, s.Cin}, "V");
    Tensor m = make_tensor(device(), dt, {16 * t.rows, s.Cout}, "M");
    Tensor y = make_tensor(device(), dt, ys, "y");
    std::unique_ptr<Tensor> b, r;
    if (s.bias) b = std::make_unique<Tensor>(test::device_tensor(device(), dt, {s.Cout}, bv, "bias"));
    if (s.residual) r = std::make_unique<Tensor>(test::device_tensor(device(), dt, ys, rv, "residual"));
    for (const Tensor* out : {&v, &m, &y}) test::poison(device(), *out);

    vk::Recording rec(device());
    std::unique_ptr<Tensor> table, gamma, beta; // alive until the recording has run
    kernels::WinogradNorm norm;
    if (s.norm) {
      gamma = std::make_unique<Tensor>(test::device_tensor(device(), dt, {s.Cin}, gv, "gamma"));
      beta = std::make_unique<Tensor>(test::device_tensor(device(), dt, {s.Cin}, betav, "beta"));
      table = std::make_unique<Tensor>(make_tensor(
          device(), DType::F32, {kernels::group_norm_table_floats(*kernels_, x, groups)}, "norm statistics"));
      test::poison(device(), *table);
      kernels::group_norm_table(*kernels_, rec, x, *gamma, *beta, *table, groups, eps);
      norm = {table.get(), true};
    }
    kernels::conv2d_winograd(*kernels_, rec, x, u, b.get(), y, s.up, r.get(), v, m, s.norm ? &norm : nullptr);
    rec.finish();
    device().run(rec);

    const double unit = dt == DType::F16 ? 1.0 / 2048 : 1.0 / (1 << 24);
    const bool fp16_sums =
        kernels::detail::gemm_sums_fp16_products(*kernels_, dt, static_cast<uint32_t>(s.Cout), false);
    const double per_term = 3 * unit + (fp16_sums ? test::kFp16SumGamma : 0.0) + 1e-6; // 1e-6: fp32 sums
    std::vector<double> bound = winograd_error_scale(conv_in, w_oihw, s);
    for (double& e : bound) e *= per_term;
    const test::Tolerance tol = test::gemm_tolerance(dt);
    const std::vector<float> got = download(device(), y);
    EXPECT_TRUE(test::all_close(got, ref, tol.atol, tol.rtol, bound));
    const test::ErrorReport rep = test::compare(got, ref);
    const double max_rel_l2 = dt == DType::F16 ? 3e-3 : 1e-5;
    EXPECT_LE(rep.rel_l2, max_rel_l2) << rep.summary();
  }
  void check_cases() {
    //      B   H   W  Cin Cout up bias  residual
    check({2, 9, 7, 8, 12, 1, true, false});    // odd height: a half tile at the bottom
    check({1, 20, 24, 40, 136, 1, true, true}); // several row tiles per product, N > 128
    check({1, 5, 6, 8, 8, 2, true, false});     // nearest upsampling read through
    check({2, 6, 5, 96, 200, 1, false, true});  // long K, odd width
    check({1, 3, 3, 4, 4, 1, false, false});    // one padded tile row per product
    // Cooperative-matrix row tiles (coopmat_group_row_align): 56 tiles in groups of 64 rows, where
    // the rule's 128-row tile does not divide a group; and level 0's N = 320 in 256-row tiles.
    check({1, 14, 16, 16, 128, 1, true, true});
    check({1, 64, 64, 8, 320, 1, true, true});
    // The group norm + SiLU applied by the input transform: scalar and four-channel statistics,
    // with upsampling (the padding stays zero after the norm), and a residual.
    check({2, 9, 7, 8, 12, 1, true, false, true});
    check({1, 5, 6, 8, 8, 2, true, false, true});
    check({2, 6, 5, 96, 200, 1, false, true, true});
    check({1, 20, 24, 40, 136, 1, true, true, true});
  }
};

} // namespace

TEST_P(Winograd, MatchesDirectConvolution) { check_cases(); }

// The tiled portable kernel in every configuration (tiles, packed or fp32 products): its loader
// takes each row tile's group from the tile's first row.
TEST_P(Winograd, TiledPortableConfigurations) {
  if (GetParam().dtype != DType::F16) GTEST_SKIP() << "the tiled portable kernel is fp16 only";
  for_each_tiled_portable_config([&] {
    check({1, 20, 24, 40, 136, 1, true, true});
    check({2, 6, 5, 96, 200, 1, false, true});
  });
}

// The transforms with two channels per invocation (Tuning::winograd_input_vec and
// winograd_output_vec), each alone and both: the same cases, the same bounds.
TEST_P(Winograd, TwoChannelTransforms) {
  for (const auto& [in_vec, out_vec] : {std::pair{2, 4}, std::pair{4, 2}, std::pair{2, 2}}) {
    SCOPED_TRACE("Z123_WINOGRAD_INPUT_VEC=" + std::to_string(in_vec) +
                 " Z123_WINOGRAD_OUTPUT_VEC=" + std::to_string(out_vec));
    Tuning t = device().tuning();
    t.winograd_input_vec = in_vec;
    t.winograd_output_vec = out_vec;
    use_tuning(t);
    check_cases();
  }
}

// Split K on the grouped GEMM (forced: lavapipe's rule never splits).
TEST_P(Winograd, PortableSplitK) {
  kernels::detail::force_portable_split_k_for_testing(3);
  check({2, 6, 5, 96, 40, 1, true, true});
  kernels::detail::force_portable_split_k_for_testing(0);
}

INSTANTIATE_TEST_SUITE_P(Gemm, Winograd, ::testing::ValuesIn(test::gemm_test_cases()),
                         [](const auto& param_info) { return test::gemm_case_name(param_info.param); });

// linear_grouped: each group of rows against its own weights, checked one group at a time
// against reference_linear.
class LinearGrouped : public test::GemmPathTest {};

TEST_P(LinearGrouped, EachGroupUsesItsOwnWeights) {
  const DType dt = GetParam().dtype;
  const int64_t G = 3, K = 40, N = 72;
  const int64_t R = kernels::linear_grouped_runs(*kernels_, dt, N)
                        ? 2 * kernels::linear_group_row_align(*kernels_, dt, N) + (dt == DType::F16 ? 0 : 8)
                        : 128;
  if (!kernels::linear_grouped_runs(*kernels_, dt, N)) {
    Tensor x = make_tensor(device(), dt, {G * R, K}, "x"), w = make_tensor(device(), dt, {N, G, K}, "w");
    Tensor y = make_tensor(device(), dt, {G * R, N}, "y");
    vk::Recording rec(device());
    test::expect_error([&] { kernels::linear_grouped(*kernels_, rec, x, w, y); }, ErrorKind::Unsupported,
                       {"NV coopmat2's GEMM kernel"});
    return;
  }
  const uint64_t seed = test::test_seed();
  auto xv = test::as_stored(test::random_uniform(G * R * K, seed, -1, 1), dt);
  auto wv = test::as_stored(test::random_uniform(N * G * K, seed + 1, -0.15f, 0.15f), dt);
  Tensor x = test::device_tensor(device(), dt, {G * R, K}, xv, "x");
  Tensor w = test::device_tensor(device(), dt, {N, G, K}, wv, "w");
  Tensor y = make_tensor(device(), dt, {G * R, N}, "y");
  test::poison(device(), y);
  vk::Recording rec(device());
  kernels::linear_grouped(*kernels_, rec, x, w, y);
  rec.finish();
  device().run(rec);
  const std::vector<float> got = download(device(), y);
  const bool fp16_sums = kernels::detail::gemm_sums_fp16_products(*kernels_, dt, static_cast<uint32_t>(N), false);
  for (int64_t g = 0; g < G; ++g) {
    SCOPED_TRACE("group " + std::to_string(g));
    std::vector<float> xg(xv.begin() + g * R * K, xv.begin() + (g + 1) * R * K), wg(static_cast<size_t>(N * K));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) wg[n * K + k] = wv[(n * G + g) * K + k];
    std::vector<double> ref = test::reference_linear(xg, wg, {}, {}, R, N, K, Epilogue::None);
    std::vector<double> abs_products;
    if (fp16_sums)
      abs_products =
          test::reference_linear(test::abs_values(xg), test::abs_values(wg), {}, {}, R, N, K, Epilogue::None);
    std::vector<float> yg(got.begin() + g * R * N, got.begin() + (g + 1) * R * N);
    EXPECT_TRUE(test::gemm_close(yg, ref, dt, fp16_sums ? &abs_products : nullptr));
  }
}

TEST_P(LinearGrouped, RejectsGroupsThatAreNotWholeRowTiles) {
  const DType dt = GetParam().dtype;
  if (!kernels::linear_grouped_runs(*kernels_, dt, 8)) GTEST_SKIP() << "no grouped GEMMs on this path";
  const int64_t G = 2, R = kernels::linear_group_row_align(*kernels_, dt, 8) + 4;
  Tensor x = make_tensor(device(), dt, {G * R, 16}, "x"), w = make_tensor(device(), dt, {8, G, 16}, "w");
  Tensor y = make_tensor(device(), dt, {G * R, 8}, "y");
  vk::Recording rec(device());
  test::expect_error([&] { kernels::linear_grouped(*kernels_, rec, x, w, y); }, ErrorKind::InvalidArgument,
                     {"not a multiple of"});
  Tensor w_bad = make_tensor(device(), dt, {8, G, 12}, "w bad K");
  test::expect_error([&] { kernels::linear_grouped(*kernels_, rec, x, w_bad, y); }, ErrorKind::InvalidArgument,
                     {"must be [N, G, K]"});
}

INSTANTIATE_TEST_SUITE_P(Gemm, LinearGrouped, ::testing::ValuesIn(test::gemm_test_cases()),
                         [](const auto& param_info) { return test::gemm_case_name(param_info.param); });

TEST(WinogradWeights, RejectsAWeightOfTheWrongSize) {
  test::expect_error([] { kernels::conv_weight_to_winograd(std::vector<float>(2 * 3 * 9 - 1), 2, 3); },
                     ErrorKind::InvalidArgument, {"do not form [2, 3, 3, 3]"});
}
