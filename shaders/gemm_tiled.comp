#version 450
// Tiled GEMM for GPUs without (usable) matrix units: fp16 storage, fp32 arithmetic, no subgroup
// operations, any subgroup width. A workgroup of TX x TY invocations computes a BM x BN tile of y;
// each invocation owns TM x TN outputs at rows ty + TY i and columns tx + TX j (interleaved, so a
// subgroup's shared-memory reads are broadcasts or fall in distinct banks). The A and W tiles go
// through shared memory as fp32, converted once when stored, BK deep, and are read as vec4 along
// K: per 4 K steps an invocation loads TM + TN vec4 for TM * TN * 4 multiply-adds (1 : 16 at
// 8 x 8), where the plain portable kernel (gemm.comp) reads every operand from global memory
// itself. The next K step's tiles load into registers while this one is multiplied
// (common/gemm_tile_loader.glsl, shared with the cooperative-matrix kernel, as are split K and
// the conv loader). 20 KiB of shared memory at the default tiling (10 with F16_ARITH; 17 for the
// 64 x 64 packed variant's 64-deep K steps): fits every device.
// With F16_ARITH the tiles stay fp16 in shared memory and the products run as packed f16vec2
// multiply-adds (two per instruction: twice the fp32 rate on most GPUs without matrix units;
// docs/devices.md says which), summed in fp16 over FLUSH_K positions of K (FLUSH_K / 2 products
// per half; default BK) and then added into the fp32 accumulators, so rounding grows with
// FLUSH_K, not with K.
// Defines: DTYPE_F16 (required), CONV, F16_ARITH, FLUSH_K; BM, BN, BK, TX, TY (TM = BM / TY,
// TN = BN / TX).
#extension GL_EXT_control_flow_attributes : require

#ifndef DTYPE_F16
#error "the tiled GEMM is fp16 only (fp32 models keep gemm.comp)"
#endif
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 16
#endif
#ifndef TX
#define TX 16
#endif
#ifndef TY
#define TY 16
#endif
#define NTHREADS (TX * TY)
#define TM (BM / TY)
#define TN (BN / TX)
#ifndef FLUSH_K
#define FLUSH_K BK
#endif
#if (BM % TY) != 0 || (BN % TX) != 0 || (BK % 8) != 0 || (BK % FLUSH_K) != 0 || (FLUSH_K % 4) != 0
#error "tile sizes must divide among the invocations, BK be whole 8-element chunks, FLUSH_K divide BK"
#endif

layout(local_size_x = NTHREADS) in;
layout(constant_id = 0) const bool VEC8 = false;
// K, the split-K range and the conv input geometry may be fixed per pipeline (constants 2-8,
// common/gemm_io.glsl); constant 1 is unused here (the cooperative-matrix kernel's epilogue,
// which this kernel keeps in the push block).
#define GEMM_GEOM_SPEC
// Grouped weights (pc.w_group_rows, common/gemm_io.glsl) for Winograd convolutions, in the
// pipelines that run them only (constant 9): compiled into every pipeline, the two extra
// operations per weight load made the forced portable step 4% slower on an H100 (bench/NOTES.md
// session 22, run 5). The cooperative-matrix kernel, which shares the loader, leaves them out.
layout(constant_id = 9) const bool GROUPED = false;
#define GEMM_GROUPED_WEIGHTS GROUPED
#include "common/gemm_tile_loader.glsl"

// A tile row is BK / 4 four-element groups of K plus one of padding: the invocations of a
// subgroup read distinct rows at a stride of an odd number of 8-byte (fp16) or 16-byte (fp32)
// units, which falls in distinct banks.
#define LDV (BK / 4 + 1)
#ifdef F16_ARITH
#define K4_T uvec2 // 4 halves, as 2 packed pairs
#define TO_K4(lo, hi) uvec2(lo, hi)
#else
#define K4_T vec4
#define TO_K4(lo, hi) vec4(unpackHalf2x16(lo), unpackHalf2x16(hi))
#endif
shared K4_T a_sh[BM * LDV];
shared K4_T b_sh[BN * LDV];

void store_tiles() {
  uint chunk = gl_LocalInvocationIndex % CHUNKS_K;
  uint row = gl_LocalInvocationIndex / CHUNKS_K;
  [[unroll]] for (uint p = 0; p < A_PASSES; ++p) {
    uint at = (row + p * ROWS_PER_PASS) * LDV + chunk * 2;
    a_sh[at] = TO_K4(ra[p].x, ra[p].y);
    a_sh[at + 1] = TO_K4(ra[p].z, ra[p].w);
  }
  [[unroll]] for (uint p = 0; p < B_PASSES; ++p) {
    if (!B_ROW_OK(row + p * ROWS_PER_PASS)) continue;
    uint at = (row + p * ROWS_PER_PASS) * LDV + chunk * 2;
    b_sh[at] = TO_K4(rb[p].x, rb[p].y);
    b_sh[at + 1] = TO_K4(rb[p].z, rb[p].w);
  }
}

void main() {
  // With split K, z is the K range, and the few row tiles all fit in y.
  const bool split = G_K_CHUNK != 0u;
  uint m_tile = split ? gl_WorkGroupID.y : gemm_m_tile();
  uint k_begin = split ? gl_WorkGroupID.z * G_K_CHUNK : 0u;
  uint k_end = split ? min(G_K, k_begin + G_K_CHUNK) : G_K;
  tile_m0 = m_tile * BM;
  tile_n0 = gl_WorkGroupID.x * BN;
  if (tile_m0 >= pc.M) return; // whole workgroup leaves together: barriers stay uniform
  init_tile_rows();
  const uint tx = gl_LocalInvocationIndex % TX, ty = gl_LocalInvocationIndex / TX;

  float acc[TM][TN];
  [[unroll]] for (uint i = 0; i < TM; ++i)
    [[unroll]] for (uint j = 0; j < TN; ++j) acc[i][j] = 0.0;
#ifdef F16_ARITH
  f16vec2 acc16[TM][TN]; // this K step's sums: even K positions in x, odd in y
#endif

  // k_chunk is a multiple of BK, so a K step never straddles two ranges; loads zero-fill past K.
  load_tiles(k_begin);
  for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
    store_tiles();
    barrier();
    if (k0 + BK < k_end) load_tiles(k0 + BK); // in flight during the arithmetic below
    [[unroll]] for (uint k4 = 0; k4 < BK / 4; ++k4) {
#ifdef F16_ARITH
      if (k4 % (FLUSH_K / 4) == 0)
        [[unroll]] for (uint i = 0; i < TM; ++i)
          [[unroll]] for (uint j = 0; j < TN; ++j) acc16[i][j] = f16vec2(0.0hf);
#endif
      K4_T a[TM], b[TN];
      [[unroll]] for (uint i = 0; i < TM; ++i) a[i] = a_sh[(ty + TY * i) * LDV + k4];
      [[unroll]] for (uint j = 0; j < TN; ++j) b[j] = b_sh[(tx + TX * j) * LDV + k4];
      [[unroll]] for (uint i = 0; i < TM; ++i)
        [[unroll]] for (uint j = 0; j < TN; ++j) {
#ifdef F16_ARITH
          f16vec2 s = fma(unpackFloat2x16(a[i].x), unpackFloat2x16(b[j].x), acc16[i][j]);
          acc16[i][j] = fma(unpackFloat2x16(a[i].y), unpackFloat2x16(b[j].y), s);
#else
          float s = fma(a[i].x, b[j].x, acc[i][j]);
          s = fma(a[i].y, b[j].y, s);
          s = fma(a[i].z, b[j].z, s);
          acc[i][j] = fma(a[i].w, b[j].w, s);
#endif
        }
#ifdef F16_ARITH
      if ((k4 + 1) % (FLUSH_K / 4) == 0)
        [[unroll]] for (uint i = 0; i < TM; ++i)
          [[unroll]] for (uint j = 0; j < TN; ++j) {
            vec2 h = vec2(acc16[i][j]);
            acc[i][j] += h.x + h.y;
          }
#endif
    }
    barrier(); // the next store overwrites the tiles
  }

  // The epilogue runs as a rolled loop over a flat copy (as in gemm.comp): its code (bias,
  // erf/exp, residual) is emitted once instead of TM * TN times.
  float vals[TM * TN];
  [[unroll]] for (uint i = 0; i < TM; ++i)
    [[unroll]] for (uint j = 0; j < TN; ++j) vals[i * TN + j] = acc[i][j];
  [[dont_unroll]] for (uint e = 0; e < TM * TN; ++e) {
    uint m = tile_m0 + ty + TY * (e / TN), n = tile_n0 + tx + TX * (e % TN);
    if (m >= pc.M || n >= pc.N) continue;
    if (split)
      y_partial[(gl_WorkGroupID.z * pc.M + m) * pc.N + n] = vals[e];
    else
      y[m * pc.N + n] = STORE(gemm_epilogue(vals[e], m, n));
  }
}
