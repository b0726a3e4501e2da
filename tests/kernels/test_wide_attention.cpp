// The pieces of single-head attention computed as GEMMs (nets::single_head_attention_by_gemm,
// the VAE's 512-wide head): kernels::matmul_f32 (fp32 output from fp16 or fp32 inputs) and
// kernels::softmax_rows against float64 references, then the whole route against the float64
// attention reference, with query chunks smaller than the sequence and batch 2. Every output is
// poisoned first.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "reference_attention.hpp"
#include "reference_gemm.hpp"
#include "support/check.hpp"
#include "support/vk_env.hpp"
#include "z123/error.hpp"
#include "z123/kernels/attention.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/nets/blocks.hpp"
#include "z123/workspace.hpp"

using namespace z123;

namespace {

class WideAttention : public test::GemmPathTest {
protected:
  DType dt() const { return GetParam().dtype; }

  // y [M, N] fp32 = x [M, K] · w [N, K]^T.
  void check_matmul(int64_t M, int64_t K, int64_t N) {
    const uint64_t seed = test::test_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + ", M " + std::to_string(M) + " K " + std::to_string(K) + " N " +
                 std::to_string(N));
    auto xv = test::as_stored(test::random_uniform(M * K, seed, -1, 1), dt());
    auto wv = test::as_stored(test::random_uniform(N * K, seed + 1, -1, 1), dt());
    Tensor x = test::device_tensor(device(), dt(), {M, K}, xv, "x");
    Tensor w = test::device_tensor(device(), dt(), {N, K}, wv, "w");
    Tensor y = make_tensor(device(), DType::F32, {M, N}, "y");
    test::poison(device(), y);
    vk::Recording rec(device());
    kernels::matmul_f32(*kernels_, rec, x, w, y);
    device().run(rec);
    auto ref = test::reference_linear(xv, wv, {}, {}, M, N, K, kernels::Epilogue::None);
    // fp32 accumulation of K products of magnitude <= 1, and no output rounding.
    EXPECT_TRUE(test::all_close(download(device(), y), ref, 2e-6 * K, 1e-5));
  }
};

} // namespace

TEST_P(WideAttention, MatmulF32OddShape) { check_matmul(37, 45, 29); }
TEST_P(WideAttention, MatmulF32ScoresShape) { check_matmul(130, 512, 200); }
TEST_P(WideAttention, MatmulF32NarrowN) { check_matmul(19, 24, 3); }

TEST_P(WideAttention, MatmulF32RejectsNonF32Output) {
  Tensor x = make_tensor(device(), dt(), {4, 8}, "x"), w = make_tensor(device(), dt(), {4, 8}, "w");
  Tensor y = make_tensor(device(), DType::F16, {4, 4}, "y");
  vk::Recording rec(device());
  try {
    kernels::matmul_f32(*kernels_, rec, x, w, y);
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
  }
}

TEST_P(WideAttention, SoftmaxRows) {
  // Rows of several lengths, one longer than the workgroup, with large scores (exp2 overflow
  // would show as inf or nan).
  for (int64_t n : {1, 7, 300, 1000}) {
    const int64_t rows = 5;
    const float scale = 0.125f;
    auto xv = test::random_uniform(rows * n, test::test_seed() + n, -400, 400);
    Tensor x = test::device_tensor(device(), DType::F32, {rows, n}, xv, "scores");
    Tensor y = make_tensor(device(), dt(), {rows, n}, "p");
    test::poison(device(), y);
    vk::Recording rec(device());
    kernels::softmax_rows(*kernels_, rec, x, y, scale);
    device().run(rec);
    std::vector<double> ref(xv.size());
    for (int64_t r = 0; r < rows; ++r) {
      double m = -INFINITY, sum = 0;
      for (int64_t i = 0; i < n; ++i) m = std::max(m, double(xv[r * n + i]) * scale);
      for (int64_t i = 0; i < n; ++i) sum += std::exp(double(xv[r * n + i]) * scale - m);
      for (int64_t i = 0; i < n; ++i) ref[r * n + i] = std::exp(double(xv[r * n + i]) * scale - m) / sum;
    }
    // fp32 exp2 of arguments up to ~100 in magnitude: ~1e-5 relative; fp16 output: 2^-11.
    EXPECT_TRUE(test::all_close(download(device(), y), ref, 1e-6, dt() == DType::F16 ? 1e-3 : 2e-5)) << "n " << n;
  }
}

TEST_P(WideAttention, WholeRouteMatchesReference) {
  // B 2, N 77 tokens, C 64 and 512, score chunks of 10 and 32 rows (several, the last partial).
  for (auto [C, chunk_rows] : {std::pair<int64_t, int64_t>{64, 10}, {512, 32}}) {
    const int64_t B = 2, N = 77;
    const uint64_t seed = test::test_seed() + static_cast<uint64_t>(C);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", C " + std::to_string(C));
    auto qv = test::as_stored(test::random_uniform(B * N * C, seed, -1, 1), dt());
    auto kv = test::as_stored(test::random_uniform(B * N * C, seed + 1, -1, 1), dt());
    auto vv = test::as_stored(test::random_uniform(B * N * C, seed + 2, -1, 1), dt());
    Tensor q = test::device_tensor(device(), dt(), {B, N, C}, qv, "q");
    Tensor k = test::device_tensor(device(), dt(), {B, N, C}, kv, "k");
    Tensor v = test::device_tensor(device(), dt(), {B, N, C}, vv, "v");
    Tensor out = make_tensor(device(), dt(), {B, N, C}, "out");
    test::poison(device(), out);
    Workspace ws(device(), "test");
    vk::Recording rec(device());
    nets::single_head_attention_by_gemm(*kernels_, rec, ws, q, k, v, out, static_cast<uint64_t>(chunk_rows * N * 4));
    device().run(rec);
    auto ref = test::reference_attention(B, 1, C, 1.0 / std::sqrt(double(C)), false, {&qv, N, C, 0}, {&kv, N, C, 0},
                                         {&vv, N, C, 0});
    // As the flash kernels' tolerance: fp32 scores, softmax weights rounded to the storage type
    // before P·V (2^-11 relative each in fp16: atol 1e-3), one output rounding.
    const bool f16 = dt() == DType::F16;
    EXPECT_TRUE(test::all_close(download(device(), out), ref, f16 ? 1e-3 : 1e-5, f16 ? 1e-3 : 1e-5));
  }
}

INSTANTIATE_TEST_SUITE_P(Gemm, WideAttention, ::testing::ValuesIn(test::gemm_test_cases()),
                         [](const auto& param_info) { return test::gemm_case_name(param_info.param); });
