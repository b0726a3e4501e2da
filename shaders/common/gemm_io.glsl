// Shared interface of the GEMM kernels (gemm.comp: portable, gemm_coopmat.comp: NV
// cooperative matrix): bindings, push constants, the implicit-GEMM convolution geometry and the
// fused epilogue. Mirrors GemmPush in engine/src/kernels/gemm_dispatch.cpp.
//
//   y[M, N] = act(A[M, K] · W[N, K]^T + bias[N]) + residual[M, N]
// Dense (linear): A = x [M, K]. With GEMM_LN_INPUT (below), A is x's rows layer-normalized. CONV defined: A is the implicit im2col of NHWC x with
// K ordered (ky, kx, ci), matching the kernel weight layout [Cout, kh, kw, Cin].
#ifndef Z123_GEMM_IO_GLSL
#define Z123_GEMM_IO_GLSL

#include "common/types.glsl"

layout(std430, binding = 0) readonly buffer XBuf { STORE_T x[]; };
layout(std430, binding = 1) readonly buffer WBuf { STORE_T w[]; };
layout(std430, binding = 2) readonly buffer BiasBuf { STORE_T bias[]; };
layout(std430, binding = 3) readonly buffer ResBuf { STORE_T residual[]; };
// OUT_F32 (portable kernel only): y is fp32 whatever the storage type of the inputs (raw scores
// of the wide-head attention, kernels::matmul_f32).
#ifdef OUT_F32
layout(std430, binding = 4) writeonly buffer YBuf { float y[]; };
#define STORE_Y(v) (v)
#else
layout(std430, binding = 4) writeonly buffer YBuf { STORE_T y[]; };
#define STORE_Y(v) STORE(v)
#endif

layout(push_constant) uniform GemmPush {
  uint M, N, K;
  uint flags;      // GEMM_HAS_BIAS | GEMM_HAS_RESIDUAL | activation << GEMM_ACT_SHIFT
  uint m_groups_y; // M tiles are spread over grid y and z: tile = y + z * m_groups_y
  // Convolution geometry (CONV variants only). x is [B, H, W, Cin], y is [B, Ho, Wo, N].
  uint H, W, Cin, Ho, Wo, KH, KW, stride, pad_top, pad_left, upsample;
  // Split K (cooperative-matrix kernel only; 0 = off): workgroup z sums K range
  // [z * k_chunk, (z + 1) * k_chunk) and writes raw fp32 partial sums to binding 4 at
  // [z, M, N]; gemm_splitk_reduce.comp adds them up and applies the epilogue.
  uint k_chunk;
  // Grouped weights (0 = off; gemm.comp and gemm_tiled.comp only, kernels::linear_grouped): y's
  // rows come in M / w_group_rows groups of w_group_rows, and group g multiplies by weight rows
  // n * groups + g (w is [N, groups, K]): the 16 products of a Winograd convolution in one GEMM.
  uint w_group_rows;
  float ln_eps;       // GEMM_LN_INPUT: the LayerNorm's epsilon
  uint ln_part_cols;  // GEMM_LN_INPUT: the columns each part of the input rows' statistics covers
} pc;

#define GEMM_HAS_BIAS 1u
#define GEMM_HAS_RESIDUAL 2u
#define GEMM_LN_INPUT 4u  // see gemm_ln() below
#define GEMM_ROW_STATS 8u // see gemm_row_stats() below
#define GEMM_ACT_SHIFT 8u
// A kernel that defines GEMM_EPI_SPEC_ID (an unused constant_id) fixes its epilogue per
// pipeline: specialization constant EPI holds pc.flags' bits plus EPI_SPLIT_K (K split: raw
// partial sums, no epilogue) and EPI_N8 (N % 8 == 0), and the driver compiles only the epilogue
// the pipeline's GEMMs use. Epilogue code, even never executed, costs the main loop on NVIDIA:
// the KHR GEMMs ran 5-40% slower with a little more of it, and 4-37% faster with it specialized
// away (bench/NOTES.md session 14). The tiled portable kernel keeps the push block: specialized,
// it ran 4.5% slower. Mirrors epilogue_spec in engine/src/kernels/gemm_dispatch.cpp.
#define EPI_SPLIT_K 0x10000u
#define EPI_N8 0x20000u
#ifdef GEMM_EPI_SPEC_ID
layout(constant_id = GEMM_EPI_SPEC_ID) const uint EPI = 0u;
#define GEMM_FLAGS EPI
#define SPLIT_K ((EPI & EPI_SPLIT_K) != 0u)
#else
#define GEMM_FLAGS pc.flags
#define SPLIT_K (G_K_CHUNK != 0u)
#endif
// A kernel that defines GEMM_GEOM_SPEC (the cooperative-matrix and the tiled portable one) may
// also fix per pipeline the problem's K, its split-K range and the conv input geometry its loads
// walk (specialization constants 2-8; 0 reads the push block, which carries them all for the
// other kernels and the split-K reduce). Known at compile time, the divisions of the im2col walk
// become multiplications and the K loop has a known trip count: on an H100 the KHR convs ran 18%
// faster and the linear GEMMs 8%, a step 10% faster; the forced portable step 3% (bench/NOTES.md
// session 15). Which fields the host fixes is Tuning::gemm_fixed_geometry; mirrors
// tiled_gemm_spec in engine/src/kernels/gemm_dispatch.cpp.
#ifdef GEMM_GEOM_SPEC
layout(constant_id = 2) const uint GEO_K = 0u;
layout(constant_id = 3) const uint GEO_K_CHUNK = 0u;
layout(constant_id = 4) const uint GEO_CIN = 0u;
layout(constant_id = 5) const uint GEO_KW = 0u;
layout(constant_id = 6) const uint GEO_H = 0u;
layout(constant_id = 7) const uint GEO_W = 0u;
layout(constant_id = 8) const uint GEO_UPSAMPLE = 0u;
#define GEO_OR_PUSH(c, v) ((c) != 0u ? (c) : (v))
#define G_K GEO_OR_PUSH(GEO_K, pc.K)
#define G_K_CHUNK GEO_OR_PUSH(GEO_K_CHUNK, pc.k_chunk)
#define G_CIN GEO_OR_PUSH(GEO_CIN, pc.Cin)
#define G_KW GEO_OR_PUSH(GEO_KW, pc.KW)
#define G_H GEO_OR_PUSH(GEO_H, pc.H)
#define G_W GEO_OR_PUSH(GEO_W, pc.W)
#define G_UPSAMPLE GEO_OR_PUSH(GEO_UPSAMPLE, pc.upsample)
#else
#define G_K pc.K
#define G_K_CHUNK pc.k_chunk
#define G_CIN pc.Cin
#define G_KW pc.KW
#define G_H pc.H
#define G_W pc.W
#define G_UPSAMPLE pc.upsample
#endif
#define GEMM_ACT_GELU 1u
#define GEMM_ACT_SILU 2u
#define GEMM_ACT_GEGLU 3u // see gemm_geglu() below

// Row tile index of this workgroup; grids with more than 65535 row tiles use z as well.
uint gemm_m_tile() { return gl_WorkGroupID.y + gl_WorkGroupID.z * pc.m_groups_y; }

// erf with |error| < 1.5e-7 (Abramowitz & Stegun 7.1.26): GLSL has no erf, and this is well
// below fp32 GEMM rounding noise, so GELU stays "exact erf" for the fp16/fp32 outputs.
float gemm_erf(float v) {
  float a = abs(v);
  float t = 1.0 / (1.0 + 0.3275911 * a);
  float p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  float r = 1.0 - p * exp(-a * a);
  return v < 0.0 ? -r : r;
}

// Exact (erf) GELU.
float gemm_gelu(float v) { return 0.5 * v * (1.0 + gemm_erf(v * 0.70710678118654752)); }

// bias and activation of column n, in fp32 (the first part of gemm_epilogue).
float gemm_bias_act(float v, uint n) {
  if ((GEMM_FLAGS & GEMM_HAS_BIAS) != 0u) v += LOAD(bias[n]);
  uint act = (GEMM_FLAGS >> GEMM_ACT_SHIFT) & 0xffu;
  if (act == GEMM_ACT_GELU) {
    v = gemm_gelu(v);
  } else if (act == GEMM_ACT_SILU) {
    v = v / (1.0 + exp(-v)); // exp overflow to inf gives -0, the right limit
  }
  return v;
}

// bias, activation, then residual (resnet: shortcut + conv2 output), all in fp32.
float gemm_epilogue(float v, uint m, uint n) {
  v = gemm_bias_act(v, n);
  if ((GEMM_FLAGS & GEMM_HAS_RESIDUAL) != 0u) v += LOAD(residual[m * pc.N + n]);
  return v;
}

// GEGLU (the UNet feed-forward's first projection, diffusers' GEGLU; kernels::linear_geglu): the
// weight is [value rows F | gate rows F] (N = 2F, bias [2F]) and y is [M, F], y[m, f] =
// value * gelu(gate), so the [M, 2F] product is never stored. The kernel's columns are virtual:
// they interleave the two halves in runs of GEGLU_UNIT (a value run, then the gate run of the same
// outputs), so that each output's two sums meet in one invocation (gemm.comp: GEGLU_UNIT is half
// an invocation's columns) or one subgroup's staged block (gemm_coopmat.comp: 16). The host sends
// it only with F % 16 == 0, unsplit K, and to those two kernels (the cooperative-matrix one fixes
// its epilogue per pipeline, so no other pipeline compiles any of this).
#ifndef GEGLU_UNIT
#define GEGLU_UNIT 16
#endif
bool gemm_geglu() { return ((GEMM_FLAGS >> GEMM_ACT_SHIFT) & 0xffu) == GEMM_ACT_GEGLU; }
// Whether virtual column c holds a value (else a gate, GEGLU_UNIT columns after its value).
bool geglu_is_value(uint c) { return c % (2u * GEGLU_UNIT) < GEGLU_UNIT; }
// The output column f that virtual column c contributes to.
uint geglu_output_col(uint c) { return c / (2u * GEGLU_UNIT) * GEGLU_UNIT + c % GEGLU_UNIT; }
// The weight row (and bias entry) behind virtual column c.
uint gemm_weight_row(uint c) {
  if (!gemm_geglu()) return c;
  uint f = geglu_output_col(c);
  return geglu_is_value(c) ? f : pc.N / 2u + f;
}
// Output f from its value and gate sums: bias on both, then value * gelu(gate), in fp32.
float gemm_geglu_epilogue(float value, float gate, uint f) {
  if ((GEMM_FLAGS & GEMM_HAS_BIAS) != 0u) {
    value += LOAD(bias[f]);
    gate += LOAD(bias[pc.N / 2u + f]);
  }
  return value * gemm_gelu(gate);
}

// Row statistics in parts (kernels::RowStats), written by one GEMM for the LayerNorm of the next
// (below): binding 5 holds, for each row m of the producer's output, N / cols parts (mean, M2) of
// `cols` consecutive outputs each (M2: the sum of squared deviations from that mean), taken from
// the values as stored (rounded to the storage type), at row_stats[m * (N / cols) + n / cols].
// The includer defines GEMM_ROW_STATS_BINDING (gemm.comp and gemm_coopmat.comp: their pipelines
// have six bindings); cols is its own (8 or 32), the host knows it (kernels::linear_row_stats_cols).
#ifdef GEMM_ROW_STATS_BINDING
layout(std430, binding = 5) buffer RowStatsBuf { vec2 row_stats[]; };
#endif
bool gemm_row_stats() { return (GEMM_FLAGS & GEMM_ROW_STATS) != 0u; }
// (mean, M2) of 8 values.
vec2 row_part8(float v[8]) {
  float mean = 0.0;
  [[unroll]] for (uint e = 0; e < 8; ++e) mean += v[e];
  mean *= 0.125;
  float m2 = 0.0;
  [[unroll]] for (uint e = 0; e < 8; ++e) m2 = fma(v[e] - mean, v[e] - mean, m2);
  return vec2(mean, m2);
}

// LayerNorm on the input rows (kernels::NormalizedInput; dense GEMMs with K unsplit, no residual;
// gemm.comp and gemm_coopmat.comp): the weight is w' = w diag(gamma) and the bias b' = bias +
// w beta, so that LayerNorm(x) w^T + bias = rstd (x w'^T - mean colsum) + b', with colsum[n] the
// sum of w' row n (fp32, in binding 3 in place of a residual). Each row's mean and rstd come from
// the parts of its statistics that the GEMM which wrote x stored (binding 5, GEMM_ROW_STATS, parts
// of pc.ln_part_cols columns): the normalized rows are never stored, and the statistics cost this
// GEMM K / cols loads per row, none of its main loop.
layout(std430, binding = 3) readonly buffer LnColSum { float ln_colsum[]; };
bool gemm_ln() { return (GEMM_FLAGS & GEMM_LN_INPUT) != 0u; }
// The normalized product of weight row `wrow` from its raw sum and column sum; stats = (mean, rstd).
float ln_apply(float acc, vec2 stats, float colsum) { return stats.y * (acc - stats.x * colsum); }
float gemm_ln_apply(float acc, vec2 stats, uint wrow) { return ln_apply(acc, stats, ln_colsum[wrow]); }
// A row's parts merged as sums of offsets from one part's mean (so that a large common offset
// does not cancel the variance away): with d = mean_i - shift, s1 = sum d and s2 = sum (M2_i +
// cols d^2), the row's M2 is s2 - cols s1^2 / parts (Chan's merge of equal counts).
struct LnParts {
  float shift, s1, s2;
};
LnParts ln_parts_start(float shift) { return LnParts(shift, 0.0, 0.0); }
void ln_parts_add(inout LnParts s, vec2 part) {
  float d = part.x - s.shift;
  s.s1 += d;
  s.s2 += fma(float(pc.ln_part_cols) * d, d, part.y);
}
// (mean, rstd) of a row of K values from the sums of all its parts (biased variance, as torch's).
vec2 ln_parts_stats(LnParts s, float K) {
  float cols = float(pc.ln_part_cols), parts = K / cols;
  float m2 = max(s.s2 - cols * s.s1 * s.s1 / parts, 0.0);
  return vec2(s.shift + s.s1 / parts, inversesqrt(m2 / K + pc.ln_eps));
}

// Output pixel m = (b, oy, ox) of a convolution, as the top-left input coordinate of its
// receptive field in the (upsampled, padded) image and the first pixel of its batch image.
struct ConvRow {
  int iy0, ix0;
  uint base; // b * H * W
};

ConvRow conv_row(uint m) {
  uint ox = m % pc.Wo;
  uint t = m / pc.Wo;
  uint oy = t % pc.Ho;
  uint b = t / pc.Ho;
  ConvRow r;
  r.iy0 = int(oy * pc.stride) - int(pc.pad_top);
  r.ix0 = int(ox * pc.stride) - int(pc.pad_left);
  r.base = b * G_H * G_W;
  return r;
}

// Element offset of input channel 0 of tap (ky, kx) for row r, or -1 in the zero padding.
// The nearest-neighbour upsampling divides the upsampled coordinate by the factor.
int conv_tap_offset(ConvRow r, uint ky, uint kx) {
  int iy = r.iy0 + int(ky);
  int ix = r.ix0 + int(kx);
  if (iy < 0 || ix < 0 || iy >= int(G_H * G_UPSAMPLE) || ix >= int(G_W * G_UPSAMPLE)) return -1;
  uint sy = uint(iy), sx = uint(ix);
  if (G_UPSAMPLE != 1u) { // uniform branch: spares two integer divisions in the common case
    sy /= G_UPSAMPLE;
    sx /= G_UPSAMPLE;
  }
  return int((r.base + sy * G_W + sx) * G_CIN);
}

#endif
