#include "z123/kernels/linear.hpp"

#include <string>

#include "kernels/gemm_dispatch.hpp"
#include "z123/error.hpp"

namespace z123::kernels {

std::vector<int64_t> linear_output_shape(const Tensor& x, const Tensor& w) {
  if (x.shape.empty()) throw invalid_argument("linear: input " + x.describe() + " must have at least 1 dim");
  if (w.shape.size() != 2) throw invalid_argument("linear: weight " + w.describe() + " must be [out, in]");
  if (w.dim(1) != x.dim(-1))
    throw invalid_argument("linear: weight " + w.describe() + " takes " + std::to_string(w.dim(1)) +
                           " input features, input " + x.describe() + " has " + std::to_string(x.dim(-1)));
  std::vector<int64_t> shape = x.shape;
  shape.back() = w.dim(0);
  return shape;
}

namespace {

// M = every leading dim of x, N and K from w [N, K].
void set_dense_geometry(detail::GemmProblem& p, const Tensor& x, const Tensor& w) {
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < x.shape.size(); ++i) rows *= x.shape[i];
  p.geometry.M = static_cast<uint32_t>(rows);
  p.geometry.N = static_cast<uint32_t>(w.dim(0));
  p.geometry.K = static_cast<uint32_t>(w.dim(1));
}

// Checks row statistics `st` (RowStats) for `rows` rows of width n in parts of `cols` columns.
void check_row_stats(const char* op, const RowStats& st, int64_t rows, int64_t n, uint32_t cols) {
  expect_shape(op, "row statistics", *st.parts, row_stats_shape(rows, n, cols));
  if (st.parts->dtype != DType::F32)
    throw invalid_argument(std::string(op) + ": row statistics " + st.parts->describe() + " must be F32");
}

// Adds the input LayerNorm to p (NormalizedInput), after checking what it needs.
void set_normalized_input(const char* op, const Kernels& kernels, detail::GemmProblem& p, const NormalizedInput& norm) {
  const Tensor& w = *p.w;
  if (!norm.colsum) throw invalid_argument(std::string(op) + ": a NormalizedInput without its column sums");
  expect_shape(op, "colsum", *norm.colsum, {w.dim(0)});
  if (norm.colsum->dtype != DType::F32)
    throw invalid_argument(std::string(op) + ": colsum " + norm.colsum->describe() + " must be F32");
  if (!(norm.eps > 0.0f)) throw invalid_argument(std::string(op) + ": LayerNorm eps must be positive");
  if (p.residual) throw invalid_argument(std::string(op) + ": a NormalizedInput with a residual");
  const RowStats& st = norm.stats;
  if (!st.parts || st.cols == 0 || w.dim(1) % st.cols != 0)
    throw invalid_argument(std::string(op) + ": a NormalizedInput needs the input's row statistics in parts that " +
                           "divide its " + std::to_string(w.dim(1)) + " columns");
  check_row_stats(op, st, p.geometry.M, w.dim(1), st.cols);
  if (!linear_normalizes(kernels, p.x->dtype, w.dim(0), w.dim(1)))
    throw unsupported(std::string(op) + ": weight " + w.describe() + " on this route: the input LayerNorm needs " +
                      "a kernel that merges row statistics (linear_normalizes)");
  p.ln_colsum = norm.colsum;
  p.ln_parts = st.parts;
  p.geometry.ln_eps = norm.eps;
  p.geometry.ln_part_cols = st.cols;
}

// Adds the output's row statistics to p (RowStats), after checking what they need.
void set_row_stats(const char* op, const Kernels& kernels, detail::GemmProblem& p, const RowStats& st) {
  const uint32_t cols = linear_row_stats_cols(kernels, p.x->dtype, p.w->dim(0));
  if (cols == 0)
    throw unsupported(std::string(op) + ": weight " + p.w->describe() + " on this route writes no row statistics " +
                      "(linear_row_stats_cols)");
  if (!st.parts || st.cols != cols)
    throw invalid_argument(std::string(op) + ": row statistics in parts of " + std::to_string(st.cols) +
                           " columns where this route writes parts of " + std::to_string(cols));
  check_row_stats(op, st, p.geometry.M, p.w->dim(0), cols);
  p.row_stats = st.parts;
}

} // namespace

std::vector<int64_t> row_stats_shape(int64_t rows, int64_t n, uint32_t cols) { return {rows, cols ? n / cols : 0, 2}; }

uint32_t linear_row_stats_cols(const Kernels& kernels, DType dtype, int64_t n) {
  return n > 0 && n < (int64_t{1} << 31) ? detail::gemm_row_stats_cols(kernels, dtype, static_cast<uint32_t>(n)) : 0;
}

bool linear_normalizes(const Kernels& kernels, DType dtype, int64_t n, int64_t k) {
  return n > 0 && k > 0 && n < (int64_t{1} << 31) && k < (int64_t{1} << 31) &&
         detail::gemm_normalizes_input(kernels, dtype, static_cast<uint32_t>(n), static_cast<uint32_t>(k));
}

void linear(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y,
            Epilogue act, const Tensor* residual, const NormalizedInput* norm, const RowStats* stats_out) {
  std::vector<int64_t> out = linear_output_shape(x, w);
  detail::GemmProblem p = detail::make_gemm_problem("linear", x, w, bias, y, act, residual, out);
  set_dense_geometry(p, x, w);
  if (norm) set_normalized_input("linear", kernels, p, *norm);
  if (stats_out) set_row_stats("linear", kernels, p, *stats_out);
  detail::record_gemm(kernels, rec, "linear", p);
}

bool linear_geglu_fuses(const Kernels& kernels, DType dtype, int64_t weight_rows) {
  return weight_rows > 0 && weight_rows < (int64_t{1} << 31) &&
         detail::gemm_fuses_geglu(kernels, dtype, static_cast<uint32_t>(weight_rows));
}

void linear_geglu(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& w, const Tensor* bias,
                  const Tensor& y, const NormalizedInput* norm) {
  std::vector<int64_t> out = linear_output_shape(x, w);
  if (!linear_geglu_fuses(kernels, x.dtype, w.dim(0)))
    throw unsupported("linear_geglu: weight " + w.describe() + " on this route: the fused GEGLU needs 2F % 32 == 0 " +
                      "and a kernel with its epilogue (linear_geglu_fuses)");
  out.back() = w.dim(0) / 2;
  detail::GemmProblem p = detail::make_gemm_problem("linear_geglu", x, w, bias, y, Epilogue::None, nullptr, out);
  p.geglu = true;
  set_dense_geometry(p, x, w);
  if (norm) set_normalized_input("linear_geglu", kernels, p, *norm);
  detail::record_gemm(kernels, rec, "linear_geglu", p);
}

void matmul_f32(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& w, const Tensor& y) {
  std::vector<int64_t> out = linear_output_shape(x, w);
  if (y.dtype != DType::F32) throw invalid_argument("matmul_f32: y " + y.describe() + " must be F32");
  // Shape checks as linear()'s, against an F32 y; the dtype checks in record_gemm know raw_f32.
  detail::GemmProblem p = detail::make_gemm_problem("matmul_f32", x, w, nullptr, y, Epilogue::None, nullptr, out);
  p.raw_f32 = true;
  set_dense_geometry(p, x, w);
  detail::record_gemm(kernels, rec, "matmul_f32", p);
}

bool linear_grouped_runs(const Kernels& kernels, DType dtype, int64_t n) {
  return n > 0 && n < (int64_t{1} << 31) && detail::gemm_groups_weights(kernels, dtype, static_cast<uint32_t>(n));
}

int64_t linear_group_row_align(const Kernels& kernels, DType dtype, int64_t n) {
  return detail::gemm_group_row_align(kernels, dtype, static_cast<uint32_t>(n));
}

void linear_grouped(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& w, const Tensor& y) {
  const char* op = "linear_grouped";
  if (x.shape.size() != 2) throw invalid_argument(std::string(op) + ": x " + x.describe() + " must be [G * R, K]");
  if (w.shape.size() != 3 || w.dim(2) != x.dim(1) || w.dim(1) < 1 || x.dim(0) % w.dim(1) != 0)
    throw invalid_argument(std::string(op) + ": weight " + w.describe() + " must be [N, G, K] with x " + x.describe() +
                           " = [G * R, K]");
  const int64_t groups = w.dim(1), rows = x.dim(0) / groups;
  if (!linear_grouped_runs(kernels, x.dtype, w.dim(0)))
    throw unsupported(std::string(op) +
                      ": grouped weights do not run on NV coopmat2's GEMM kernel (linear_grouped_runs)");
  const int64_t align = linear_group_row_align(kernels, x.dtype, w.dim(0));
  if (rows % align != 0)
    throw invalid_argument(std::string(op) + ": " + std::to_string(rows) + " rows per group is not a multiple of " +
                           std::to_string(align) + " (linear_group_row_align)");
  detail::GemmProblem p =
      detail::make_gemm_problem(op, x, w, nullptr, y, Epilogue::None, nullptr, {x.dim(0), w.dim(0)});
  p.geometry.M = static_cast<uint32_t>(x.dim(0));
  p.geometry.N = static_cast<uint32_t>(w.dim(0));
  p.geometry.K = static_cast<uint32_t>(x.dim(1));
  p.geometry.w_group_rows = static_cast<uint32_t>(rows);
  detail::record_gemm(kernels, rec, op, p);
}

std::string gemm_route(const Kernels& kernels, DType dtype) { return detail::describe_route(kernels, dtype); }

} // namespace z123::kernels
