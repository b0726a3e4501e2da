// Linear layers: dense matrix products with a fused epilogue, for every network's projections,
// feed-forward and time MLP (linear()), plus the raw fp32 product of the VAE's wide attention
// (matmul_f32()). The same GEMM kernels serve conv2d.hpp as implicit GEMMs, so both share the
// epilogue below.
#pragma once

#include "z123/kernels/kernels.hpp"
#include "z123/tensor.hpp"
#include "z123/vk/recording.hpp"

namespace z123::kernels {

// Activation applied to (accumulator + bias) before the residual is added.
enum class Epilogue : uint32_t {
  None = 0,
  Gelu = 1, // exact erf GELU, 0.5 x (1 + erf(x / sqrt 2)) (CLIP MLPs; not the tanh approximation)
  Silu = 2, // x * sigmoid(x)
};

// The statistics of a GEMM output's rows, in parts, written by the linear() that produces the rows
// (its epilogue holds them as it stores them) for the LayerNorm of the next one (NormalizedInput):
// parts [M, N / cols, 2] F32, for each row and each run of `cols` consecutive columns the run's
// mean and M2 (the sum of its squared deviations from that mean), of the values as stored.
struct RowStats {
  const Tensor* parts = nullptr;
  uint32_t cols = 0; // linear_row_stats_cols() for the producer's output width
};
// The parts tensor's shape for `rows` rows of width n in parts of `cols` columns.
std::vector<int64_t> row_stats_shape(int64_t rows, int64_t n, uint32_t cols);

// A LayerNorm over the input's rows applied inside the GEMM that reads them, so the normalized
// rows are never written (the UNet's transformer blocks: norm1-3 before their projections). Its
// affine part is folded into the weights beforehand (nets::Weights, LayerNormFold):
//   LayerNorm(x; gamma, beta) · wᵀ + bias = rstd (x · w'ᵀ - mean colsum) + b'
// with w' = w diag(gamma) as stored, b' = bias + w · beta (the bias passed), colsum[n] the sum of
// the stored w' row n, and mean and rstd x's row statistics (biased variance, fp32), which the
// kernel merges from the parts that the GEMM which wrote x left in `stats`.
struct NormalizedInput {
  const Tensor* colsum = nullptr; // [N] F32
  float eps = 1e-5f;
  RowStats stats; // x's, [M, K / cols, 2]
};

// y[M, N] = act(x[M, K] · w[N, K]^T + bias[N]) + residual[M, N]
//
// x: [..., K] (M = product of all leading dims), w: [N, K] (checkpoint layout [out, in]),
// bias: [N] or nullptr, y: [..., N] with x's leading dims, residual: y's shape or nullptr.
// All tensors share one dtype (F32 or F16); products accumulate in fp32 and the epilogue runs in
// fp32 before the single rounding to the storage type. y must not alias x, w, bias or residual
// (residual-in-place is not supported: rows are read and written by different workgroups).
// Throws InvalidArgument on any shape or dtype mismatch. Records into rec; nothing runs until
// the recording is submitted.
//
// Path (gemm_route() says which, with its fragment shape and tiles): for F16, a cooperative-matrix
// kernel where the context's matmul path has one (KHR on the device's fragment shape, NV, or NV
// cooperative matrix 2), else on GPUs the shared-memory tiled kernel (gemm_tiled.comp: packed fp16
// products where the device's fp16 arithmetic is fast); on CPU devices, and for F32, the plain
// register-tiled kernel (gemm.comp). Split K where few output tiles would leave the GPU idle.
//
// norm: x's rows layer-normalized first (NormalizedInput; w and bias folded), no residual; only
// where linear_normalizes() (else Unsupported). stats_out: also write y's row statistics (RowStats:
// parts of linear_row_stats_cols(N) columns; K unsplit), only where that is not 0.
void linear(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y,
            Epilogue act = Epilogue::None, const Tensor* residual = nullptr, const NormalizedInput* norm = nullptr,
            const RowStats* stats_out = nullptr);
// Whether linear() and linear_geglu() take a NormalizedInput for this dtype, N (w's rows) and K on
// this context: the cooperative-matrix kernels and the plain portable one do; the tiled portable
// one does not, and none does unless Tuning::gemm_layer_norm (Z123_GEMM_LN). Elsewhere the caller
// normalizes the rows itself (layer_norm_unscaled) and passes them without `norm`.
bool linear_normalizes(const Kernels& kernels, DType dtype, int64_t n, int64_t k);
// The columns of each part of the row statistics linear() writes for an output of width n (w's
// rows) on this context: 32 on the cooperative-matrix kernels (n % 32 == 0), 8 on the plain
// portable one (n % 8 == 0); 0 where it writes none (other widths, the tiled portable kernel, and
// everywhere unless Tuning::gemm_layer_norm).
uint32_t linear_row_stats_cols(const Kernels& kernels, DType dtype, int64_t n);

// The feed-forward's GEGLU projection in one pass (diffusers' GEGLU):
//   [value | gate] = x · wᵀ + bias,  y = value * gelu(gate)  (exact erf GELU)
// x: [..., K], w: [2F, K] (value rows first, then gate rows, as the checkpoint stores them),
// bias: [2F] or nullptr, y: [..., F]. The GEMM's epilogue pairs each output's value and gate sums,
// so the [..., 2F] product is never stored; the same as linear() followed by geglu() but for one
// rounding fewer. Only where linear_geglu_fuses() (else Unsupported); InvalidArgument on shape or
// dtype errors, as linear(). norm: as linear()'s.
void linear_geglu(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& w, const Tensor* bias,
                  const Tensor& y, const NormalizedInput* norm = nullptr);
// Whether linear_geglu() runs for a projection of `weight_rows` (2F) outputs of this dtype on this
// context: F % 16 == 0, and a kernel with the fused epilogue (the cooperative-matrix kernels and
// the plain portable one; not the tiled portable one, whose main loop ran slower with more
// epilogue code: bench/NOTES.md session 14).
bool linear_geglu_fuses(const Kernels& kernels, DType dtype, int64_t weight_rows);

// Grouped weights: x's rows come in G groups of R (x: [G * R, K]), and group g multiplies by its
// own weights w[:, g, :] (w: [N, G, K]): y[g R + r, n] = x[g R + r, :] · w[n, g, :]ᵀ, y: [G * R, N],
// no bias, activation or residual. One dispatch for G GEMMs that share a shape (the 16 products
// of a Winograd convolution, kernels/winograd.hpp). R must be a multiple of
// linear_group_row_align() (the row tile of the kernel that runs it); only where
// linear_grouped_runs() (else Unsupported); InvalidArgument on shape or dtype errors.
void linear_grouped(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& w, const Tensor& y);
bool linear_grouped_runs(const Kernels& kernels, DType dtype, int64_t n);
int64_t linear_group_row_align(const Kernels& kernels, DType dtype, int64_t n);

// In words, the kernels linear() and conv2d() take for this dtype on this context (what
// zero123pp-devices prints), e.g. "khr-coopmat 16x16x16, 128 x 128 tiles (...)".
std::string gemm_route(const Kernels& kernels, DType dtype);

// y = x · wᵀ with an fp32 y whatever x and w store (no bias, activation or residual): raw scores
// for a softmax that needs them unrounded (the wide-head attention of nets::vae_attention).
// x, w as for linear() (one dtype); y: [..., N] F32. Cooperative-matrix paths run their kernel in
// its fp32 partial-sum mode with a single K range; the portable path has an fp32-output variant.
void matmul_f32(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& w, const Tensor& y);

// The output shape linear() expects for y: x's shape with the last dim replaced by w.dim(0).
std::vector<int64_t> linear_output_shape(const Tensor& x, const Tensor& w);

} // namespace z123::kernels
