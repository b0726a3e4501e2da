// Internal: records one GEMM dispatch (shaders/gemm.comp, gemm_coopmat.comp or
// gemm_coopmat2.comp) for linear() and conv2d(), which only validate shapes and describe the
// problem. Picks the path, tiles and grid; knows the push-constant layout of
// shaders/common/gemm_io.glsl.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "z123/kernels/kernels.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/tensor.hpp"
#include "z123/vk/recording.hpp"

namespace z123::kernels::detail {

// Mirrors the GemmPush block of shaders/common/gemm_io.glsl.
struct GemmPush {
  uint32_t M = 0, N = 0, K = 0;
  uint32_t flags = 0;
  uint32_t m_groups_y = 0;
  uint32_t H = 0, W = 0, Cin = 0, Ho = 0, Wo = 0, KH = 1, KW = 1, stride = 1, pad_top = 0, pad_left = 0, upsample = 1;
  uint32_t k_chunk = 0;      // split K (coopmat kernels): K elements per workgroup z; 0 = no split
  uint32_t w_group_rows = 0; // grouped weights (kernels::linear_grouped); 0 = off
  float ln_eps = 0;          // the input's LayerNorm (GemmProblem::ln_colsum)
  uint32_t ln_part_cols = 0; // and the columns each part of its row statistics covers
};
static_assert(sizeof(GemmPush) == 20 * 4, "push block layout changed");

struct GemmProblem {
  const Tensor* x = nullptr;
  const Tensor* w = nullptr;
  const Tensor* bias = nullptr;     // optional
  const Tensor* residual = nullptr; // optional
  const Tensor* y = nullptr;
  Epilogue act = Epilogue::None;
  bool conv = false;
  bool raw_f32 = false; // y is F32 and gets the raw sums (matmul_f32): no epilogue
  bool geglu = false;   // kernels::linear_geglu: y [M, N / 2] = value * gelu(gate), K unsplit
  // kernels::NormalizedInput: x's rows layer-normalized inside the GEMM (K unsplit, no residual;
  // only where gemm_normalizes_input), with these weight column sums, x's row statistics in parts
  // of geometry.ln_part_cols columns (kernels::RowStats) and geometry.ln_eps.
  const Tensor* ln_colsum = nullptr;
  const Tensor* ln_parts = nullptr;
  // kernels::RowStats: the output rows' statistics written in parts of gemm_row_stats_cols
  // columns (dense, K unsplit, no GEGLU; only where that is not 0).
  const Tensor* row_stats = nullptr;
  // kernels::linear_grouped: rows in groups of geometry.w_group_rows, each with its own weights
  // (every kernel but NV coopmat2's: gemm_groups_weights). linear_grouped, its one caller, checks
  // the route and the groups' row alignment.
  GemmPush geometry; // M, N, K and (conv) the geometry fields; flags/m_groups_y are filled in
};

// Checks the output, bias and residual shapes against `out` (messages name `op`) and fills the
// operand fields; the caller sets the geometry.
GemmProblem make_gemm_problem(const char* op, const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y,
                              Epilogue act, const Tensor* residual, const std::vector<int64_t>& out);

// Whether record_gemm runs linear_geglu's fused epilogue for this dtype and N (2F): the plain
// portable and the cooperative-matrix kernels have it (F % 16 == 0); the tiled portable one does
// not (where it runs, the UNet projects and gates in two passes).
bool gemm_fuses_geglu(const Kernels& kernels, DType dtype, uint32_t n);
// Whether record_gemm applies an input LayerNorm (GemmProblem::ln_colsum) for this dtype, N and K
// in the kernel it picks: the plain portable kernel and the cooperative-matrix one merge the rows'
// statistics from their parts; the tiled portable one and NV coopmat2's do not (the latter's
// problems go to the v1/KHR kernel instead). Never where Tuning::gemm_layer_norm is off.
bool gemm_normalizes_input(const Kernels& kernels, DType dtype, uint32_t n, uint32_t k);
// The columns of each part of the output rows' statistics (GemmProblem::row_stats) record_gemm
// writes for a dense problem of this dtype and N: 32 on the cooperative-matrix kernel (N > 16,
// N % 32 == 0), 8 on the plain portable one (N % 8 == 0); 0 where it writes none (the tiled
// portable kernel, other widths, Tuning::gemm_layer_norm off).
uint32_t gemm_row_stats_cols(const Kernels& kernels, DType dtype, uint32_t n);
// Whether record_gemm runs grouped-weight problems (kernels::linear_grouped) for this dtype and N
// on this context: the portable kernels (plain and tiled) and the cooperative-matrix one (NV v1,
// KHR) have the grouped weight loader; NV coopmat2's kernel does not.
bool gemm_groups_weights(const Kernels& kernels, DType dtype, uint32_t n);
// What the row count of each group of a grouped problem of this dtype and N must be a multiple of
// here: a multiple of the row tile record_gemm runs such a problem with (each tile lies in one
// group; on the cooperative-matrix kernel record_gemm keeps to tiles whose rows divide it).
uint32_t gemm_group_row_align(const Kernels& kernels, DType dtype, uint32_t n);
// Whether this context sends problems of this dtype to the cooperative-matrix kernel.
bool gemm_uses_coopmat(const Kernels& kernels, DType dtype);
// Whether it sends problems of this dtype and output width n to the NV cooperative matrix 2
// kernel (gemm_coopmat2.comp), which takes precedence over the one above.
bool gemm_uses_coopmat2(const Kernels& kernels, DType dtype, uint32_t n);

// Whether it sends fp16 problems of output width n (raw_f32: matmul_f32's fp32 output) to the
// tiled portable kernel (gemm_tiled.comp), and whether that kernel sums packed fp16 products
// there (F16_ARITH: fp16 partial sums over one K step, then fp32; the tests widen their
// tolerance by the fp16 summation bound for it).
bool gemm_uses_tiled_portable(const Kernels& kernels, DType dtype, uint32_t n, bool raw_f32);
bool gemm_sums_fp16_products(const Kernels& kernels, DType dtype, uint32_t n, bool raw_f32);

// Throws InvalidArgument naming Z123_GEMM_TILE and the tilings built unless `name` is one of
// them (Tuning::gemm_tile: "default", "t64x128", ...).
void check_gemm_tile(const std::string& name);
// The variants (linear and conv) the tiling Tuning::gemm_tile names runs, and every such name.
std::vector<std::string> khr_tiling_variants(const std::string& name);
std::vector<std::string> khr_tiling_names();

// The portable GEMMs' variant names, composed in one place each so that tests can enumerate them
// (tests/vk/test_shader_names.cpp). base: "gemm" or "gemm_conv".
// The tiled kernel (fp16 only): tile 128 or 64, packed fp16 products or fp32 ones.
std::string tiled_portable_variant(const std::string& base, uint32_t tile, bool packed);
// The plain kernel, with the narrow-output blocks or the general ones.
std::string plain_portable_variant(const std::string& base, bool narrow, DType dtype);
// The tiles the tiled kernel comes in.
std::vector<uint32_t> tiled_portable_tiles();

// Row tiles go to grid y, and to z past this many (default 65535, the Vulkan minimum limit).
// Tests lower it to cover the y/z split with small problems; 0 restores the default.
void set_max_grid_rows_for_testing(uint32_t groups);
// The portable kernel splits K into this many ranges (as far as K allows) on any device, CPU
// included, so tests cover its split-K mode on lavapipe; 0 restores the rule.
void force_portable_split_k_for_testing(uint32_t splits);

// The KHR kernel's tiling for an M x N output (a conv's or a linear layer's) on `sms` SMs: the
// default 128 x 128, or 4-subgroup 64 x 128 / 128 x 64 tiles where those fill whole waves over
// the SMs better (gemm_dispatch.cpp says how; always the default when sms is 0, unknown).
enum class KhrTiling { Default, Rows64, Cols64 };
KhrTiling choose_khr_tiling(uint32_t M, uint32_t N, bool conv, uint32_t sms);
// The default 128 x 128 tile runs on 16 subgroups of 32 x 32 on the KHR path (gemm_khr_w4x4),
// which also takes over from the 64 x 128 tiles choose_khr_tiling picked where this says so:
// 128 x 128 tiles make two or more waves over the SMs.
bool khr_square_tiles_win(uint32_t M, uint32_t N, uint32_t sms);
// Where choose_khr_tiling picked 128 x 64 tiles, 256 x 64 ones on 16 subgroups (gemm_khr_t256x64)
// take over when they make two or more waves over the SMs.
bool khr_tall_tiles_win(uint32_t M, uint32_t N, uint32_t sms);
// Where the square tiles (16 subgroups) run with K whole, 96 x 128 ones on 12 subgroups
// (gemm_khr_t96x128) take over when their rows split into more tiles and their whole waves take
// less: M of a few hundred to a few thousand rows, whose square tiles leave a wave's SMs idle.
bool khr_short_tiles_win(uint32_t M, uint32_t N, uint32_t sms);

// How many K ranges a split-K cooperative-matrix GEMM with `tiles` default (one per SM) output
// tiles runs on `sms` SMs, given that the count rule chose to split into `rule` ranges: the
// count from 2 to `rule`'s bounds whose workgroups fill whole waves best (the K per workgroup
// times the waves they take, with the partial sums' writes and reads), fewer ranges on ties;
// `rule` itself when sms is 0 (unknown).
uint32_t choose_split_k_by_waves(uint64_t tiles, uint32_t K, uint32_t rule, uint32_t sms);

// gemm_route() of linear.hpp: the choices below, in words.
std::string describe_route(const Kernels& kernels, DType dtype);

// Validates what every GEMM needs (same dtype, no output aliasing, 32-bit index range) with
// `op` in the messages, then records the dispatch.
void record_gemm(Kernels& kernels, vk::Recording& rec, const char* op, const GemmProblem& p);

} // namespace z123::kernels::detail
