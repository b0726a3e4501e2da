// The tile loader shared by the fp16 GEMM kernels that stage BM x BK and BN x BK tiles in
// shared memory (gemm_coopmat.comp, gemm_tiled.comp): each invocation moves 16-byte chunks (8
// halves along K) of A (x, or the implicit im2col of a conv) and W from global memory into
// registers (ra, rb), zero outside M, N and K and in conv padding; the kernel stores them into
// its own shared layout. The includer defines BM, BN, BK, NTHREADS and declares
// `layout(constant_id = 0) const bool VEC8` (16-byte loads along K: K % 8 == 0, or Cin % 8 == 0
// for CONV; element-wise gathers otherwise).
#ifndef Z123_GEMM_TILE_LOADER_GLSL
#define Z123_GEMM_TILE_LOADER_GLSL

#include "common/gemm_io.glsl"

#define CHUNKS_K (BK / 8)                    // 16-byte chunks per tile row
#define ROWS_PER_PASS (NTHREADS / CHUNKS_K)  // tile rows loaded per pass of the workgroup
#define A_PASSES (BM / ROWS_PER_PASS)
#if (BM % ROWS_PER_PASS) != 0
#error "BM must be a multiple of the rows one pass of the workgroup loads"
#endif
// Narrow tiles (BN 16) have fewer weight rows than one pass loads: the surplus threads idle.
#define B_PASSES ((BN + ROWS_PER_PASS - 1) / ROWS_PER_PASS)
#if (BN % ROWS_PER_PASS) != 0
#define B_ROW_OK(r) ((r) < BN)
#else
#define B_ROW_OK(r) true
#endif

layout(std430, binding = 0) readonly buffer XBuf8 { uvec4 x8[]; };
layout(std430, binding = 1) readonly buffer WBuf8 { uvec4 w8[]; };
layout(std430, binding = 2) readonly buffer BiasBuf8 { uvec4 bias8[]; };
layout(std430, binding = 3) readonly buffer ResBuf8 { uvec4 residual8[]; };
layout(std430, binding = 4) writeonly buffer YBuf8 { uvec4 y8[]; };
// Split K (pc.k_chunk != 0): binding 4 is the fp32 scratch of partial sums instead of y.
layout(std430, binding = 4) writeonly buffer YBufPartial { float y_partial[]; };

uint tile_m0, tile_n0;
#ifdef GEMM_GROUPED_WEIGHTS
// Grouped weights (gemm_io.glsl), where the includer defines GEMM_GROUPED_WEIGHTS as a constant
// that is true in the pipelines that run them: the tile's weight row n is n * tile_w_groups +
// tile_w_group (a row tile lies in one group: BM divides w_group_rows). Set by init_tile_rows.
uint tile_w_groups = 1u, tile_w_group = 0u;
#endif
uvec4 ra[A_PASSES], rb[B_PASSES];
#ifdef CONV
ConvRow arow[A_PASSES];
bool arow_ok[A_PASSES];
#endif

uint pack2(float a, float b) { return packFloat2x16(f16vec2(a, b)); }

// Where K position k lies in the conv weight: tap (ky, kx) and input channel ci.
struct TapPos {
  uint ky, kx, ci;
};
TapPos tap_pos(uint k) {
  uint tap = k / G_CIN;
  TapPos t;
  t.ci = k - tap * G_CIN;
  t.ky = tap / G_KW;
  t.kx = tap - t.ky * G_KW;
  return t;
}

// 8 consecutive K elements of A row `row` (tile-relative, pass p) starting at k, zero outside.
// t is tap_pos(k) (CONV with VEC8: computed once per step for all of a thread's rows).
uvec4 load_a(uint p, uint row, uint k, TapPos t) {
  uint m = tile_m0 + row;
#ifdef CONV
  if (!arow_ok[p] || k >= G_K) return uvec4(0);
  if (VEC8) {
    int o = conv_tap_offset(arow[p], t.ky, t.kx);
    return o < 0 ? uvec4(0) : x8[(uint(o) + t.ci) >> 3];
  }
  // Cin % 8 != 0 (RGB inputs, 4-channel latents): the 8 elements may span taps.
  float v[8];
  [[unroll]] for (uint e = 0; e < 8; ++e) {
    v[e] = 0.0;
    if (k + e < G_K) {
      TapPos te = tap_pos(k + e);
      int o = conv_tap_offset(arow[p], te.ky, te.kx);
      if (o >= 0) v[e] = LOAD(x[uint(o) + te.ci]);
    }
  }
#else
  if (m >= pc.M) return uvec4(0);
  if (VEC8) return k < G_K ? x8[(m * G_K + k) >> 3] : uvec4(0);
  float v[8];
  [[unroll]] for (uint e = 0; e < 8; ++e) v[e] = k + e < G_K ? LOAD(x[m * G_K + k + e]) : 0.0;
#endif
  return uvec4(pack2(v[0], v[1]), pack2(v[2], v[3]), pack2(v[4], v[5]), pack2(v[6], v[7]));
}

// 8 consecutive K elements of weight row `row` (tile-relative) starting at k, zero outside.
uvec4 load_b(uint row, uint k) {
  uint n = tile_n0 + row;
  if (n >= pc.N) return uvec4(0);
#ifdef GEMM_EPI_SPEC_ID
  n = gemm_weight_row(n); // GEGLU's virtual columns (gemm_io.glsl); n itself in other pipelines
#endif
#ifdef GEMM_GROUPED_WEIGHTS
  if (GEMM_GROUPED_WEIGHTS) n = n * tile_w_groups + tile_w_group;
#endif
  if (VEC8) return k < G_K ? w8[(n * G_K + k) >> 3] : uvec4(0);
  float v[8];
  [[unroll]] for (uint e = 0; e < 8; ++e) v[e] = k + e < G_K ? LOAD(w[n * G_K + k + e]) : 0.0;
  return uvec4(pack2(v[0], v[1]), pack2(v[2], v[3]), pack2(v[4], v[5]), pack2(v[6], v[7]));
}

void load_tiles(uint k0) {
  uint chunk = gl_LocalInvocationIndex % CHUNKS_K;
  uint row = gl_LocalInvocationIndex / CHUNKS_K;
  uint k = k0 + chunk * 8;
  TapPos t;
#ifdef CONV
  if (VEC8) t = tap_pos(k);
#endif
  [[unroll]] for (uint p = 0; p < A_PASSES; ++p) ra[p] = load_a(p, row + p * ROWS_PER_PASS, k, t);
  [[unroll]] for (uint p = 0; p < B_PASSES; ++p)
    if (B_ROW_OK(row + p * ROWS_PER_PASS)) rb[p] = load_b(row + p * ROWS_PER_PASS, k);
}

// Which rows of the output tile this invocation loads, for the conv loader, and the tile's weight
// group (once per tile).
void init_tile_rows() {
#ifdef GEMM_GROUPED_WEIGHTS
  if (GEMM_GROUPED_WEIGHTS && pc.w_group_rows != 0u) {
    tile_w_groups = pc.M / pc.w_group_rows;
    tile_w_group = tile_m0 / pc.w_group_rows;
  }
#endif
#ifdef CONV
  uint row = gl_LocalInvocationIndex / CHUNKS_K;
  [[unroll]] for (uint p = 0; p < A_PASSES; ++p) {
    uint m = tile_m0 + row + p * ROWS_PER_PASS;
    arow_ok[p] = m < pc.M;
    arow[p] = conv_row(min(m, pc.M - 1));
  }
#endif
}

#endif
