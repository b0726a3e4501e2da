#version 450
// Portable GEMM, register tiled: each invocation computes a TM x TN block of y from its own
// loads (no shared memory: on lavapipe, the CPU device CI runs on, register tiling without
// shared memory was the fastest; 8 x 8 blocks beat 4 x 4, 8 x 4 and 16 x 4 there by 1.5-2.5x).
// On an H200 it reaches ~11 TFLOP/s in fp32 and ~20 in fp16 storage on the UNet's shapes.
// Defines: DTYPE_F16 (fp16 storage, fp32 math), OUT_F32 (fp32 y whatever the storage), CONV (implicit-im2col A loader, see
// common/gemm_io.glsl), TM/TN (block size; the "narrow" variants use 4 x 4 for N <= 4).
// Spec constants: 0/1 workgroup size along N/M, 2 VEC4 (4-wide loads along K: needs
// K % 4 == 0, or Cin % 4 == 0 for CONV). Loops over the block are [[unroll]]ed so the
// accumulators stay in registers on every compiler.
// LayerNorm on the input rows (GEMM_LN_INPUT, common/gemm_io.glsl; dense, K whole): each
// invocation merges its TM rows' statistics from their parts. Row statistics of the output
// (GEMM_ROW_STATS): each invocation writes its TM rows' parts of TN (8) columns.
// Split K (pc.k_chunk != 0, a multiple of 4): workgroup z sums K range [z * k_chunk, (z + 1) *
// k_chunk) and writes raw fp32 partial sums to binding 4 at [z, M, N]; gemm_splitk_reduce.comp
// adds them up and applies the epilogue (on GPUs, where few tiles would leave most of it idle).
#extension GL_EXT_control_flow_attributes : require
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
// GEGLU (common/gemm_io.glsl): an invocation's TN consecutive columns are TN / 2 values, then
// their gates.
#define GEGLU_UNIT (TN / 2)
#define GEMM_ROW_STATS_BINDING
#include "common/gemm_io.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 2) const bool VEC4 = false;

layout(std430, binding = 0) readonly buffer XBuf4 { STORE_T4 x4[]; };
layout(std430, binding = 1) readonly buffer WBuf4 { STORE_T4 w4[]; };
layout(std430, binding = 4) writeonly buffer YBufPartial { float y_partial[]; };

float acc[TM][TN];

// acc += A[rows, c0 .. c0+len) · W[cols, c0 .. c0+len)^T for one run of contiguous K: the rows
// start at aoff[i] (a zero-padding row has ok[i] false and a safe aoff), the columns at woff[j].
void accumulate(uint aoff[TM], bool ok[TM], uint woff[TN], uint len) {
  if (VEC4) {
    for (uint c = 0; c < len; c += 4) {
      vec4 a[TM], b[TN];
      [[unroll]] for (int i = 0; i < TM; ++i) a[i] = ok[i] ? vec4(x4[(aoff[i] + c) >> 2]) : vec4(0.0);
      [[unroll]] for (int j = 0; j < TN; ++j) b[j] = vec4(w4[(woff[j] + c) >> 2]);
      [[unroll]] for (int i = 0; i < TM; ++i)
        [[unroll]] for (int j = 0; j < TN; ++j) acc[i][j] += dot(a[i], b[j]);
    }
  } else {
    for (uint c = 0; c < len; ++c) {
      float a[TM], b[TN];
      [[unroll]] for (int i = 0; i < TM; ++i) a[i] = ok[i] ? LOAD(x[aoff[i] + c]) : 0.0;
      [[unroll]] for (int j = 0; j < TN; ++j) b[j] = LOAD(w[woff[j] + c]);
      [[unroll]] for (int i = 0; i < TM; ++i)
        [[unroll]] for (int j = 0; j < TN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
  }
}

void main() {
  // With split K, z is the K range and the row tiles all fit in y.
  const bool split = pc.k_chunk != 0u;
  uint m_tile = split ? gl_WorkGroupID.y : gemm_m_tile();
  uint k_begin = split ? gl_WorkGroupID.z * pc.k_chunk : 0u;
  uint k_end = split ? min(pc.K, k_begin + pc.k_chunk) : pc.K;
  uint m0 = (m_tile * gl_WorkGroupSize.y + gl_LocalInvocationID.y) * TM;
  uint n0 = (gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x) * TN;
  if (m0 >= pc.M || n0 >= pc.N) return; // no barriers below: leaving early is safe

  [[unroll]] for (int i = 0; i < TM; ++i)
    [[unroll]] for (int j = 0; j < TN; ++j) acc[i][j] = 0.0;

  // Rows/columns past the edge compute on a clamped copy of the last one; never stored.
  uint woff[TN];
  // Grouped weights (common/gemm_io.glsl): this invocation's TM rows lie in one group.
  const uint groups = pc.w_group_rows != 0u ? pc.M / pc.w_group_rows : 1u;
  const uint group = pc.w_group_rows != 0u ? m0 / pc.w_group_rows : 0u;
  [[unroll]] for (int j = 0; j < TN; ++j) woff[j] = (gemm_weight_row(min(n0 + j, pc.N - 1)) * groups + group) * pc.K;

  uint aoff[TM];
  bool ok[TM];
#ifdef CONV
  ConvRow rows[TM];
  [[unroll]] for (int i = 0; i < TM; ++i) rows[i] = conv_row(min(m0 + i, pc.M - 1));
  uint tap_k = 0; // K offset of the current tap in the weight rows
  for (uint ky = 0; ky < pc.KH; ++ky) {
    for (uint kx = 0; kx < pc.KW; ++kx) {
      [[unroll]] for (int i = 0; i < TM; ++i) {
        int o = conv_tap_offset(rows[i], ky, kx);
        ok[i] = o >= 0;
        aoff[i] = uint(max(o, 0));
      }
      // This tap's channels inside [k_begin, k_end): all of them unless K is split.
      uint c0 = max(k_begin, tap_k), c1 = min(k_end, tap_k + pc.Cin);
      if (c0 < c1) {
        uint wo[TN], ao[TM];
        [[unroll]] for (int j = 0; j < TN; ++j) wo[j] = woff[j] + c0;
        [[unroll]] for (int i = 0; i < TM; ++i) ao[i] = aoff[i] + (c0 - tap_k);
        accumulate(ao, ok, wo, c1 - c0);
      }
      tap_k += pc.Cin;
    }
  }
#else
  [[unroll]] for (int i = 0; i < TM; ++i) {
    aoff[i] = min(m0 + i, pc.M - 1) * pc.K + k_begin;
    ok[i] = true;
  }
  [[unroll]] for (int j = 0; j < TN; ++j) woff[j] += k_begin;
  accumulate(aoff, ok, woff, k_end - k_begin);
#endif

  // The epilogue runs as a rolled loop over a flat copy, so its code (bias, erf/exp, residual)
  // is emitted once instead of TM * TN times: unrolled, it tripled lavapipe's pipeline compile
  // time (seconds per variant in CI) for no measurable run-time gain.
  float vals[TM * TN];
  [[unroll]] for (int i = 0; i < TM; ++i)
    [[unroll]] for (int j = 0; j < TN; ++j) vals[i * TN + j] = acc[i][j];
#ifndef CONV
  if (gemm_ln()) { // every column, GEGLU's gates included, from its own weight row
    vec2 stats[TM];
    const uint parts = pc.K / pc.ln_part_cols;
    [[unroll]] for (int i = 0; i < TM; ++i) {
      uint base = min(m0 + i, pc.M - 1) * parts;
      LnParts s = ln_parts_start(row_stats[base].x);
      for (uint p = 0; p < parts; ++p) ln_parts_add(s, row_stats[base + p]);
      stats[i] = ln_parts_stats(s, float(pc.K));
    }
    [[dont_unroll]] for (uint e = 0; e < TM * TN; ++e)
      vals[e] = gemm_ln_apply(vals[e], stats[e / TN], gemm_weight_row(min(n0 + e % TN, pc.N - 1)));
  }
#endif
  [[dont_unroll]] for (uint e = 0; e < TM * TN; ++e) {
    uint m = m0 + e / TN, n = n0 + e % TN;
    if (m >= pc.M || n >= pc.N) continue;
    if (split) {
      y_partial[(gl_WorkGroupID.z * pc.M + m) * pc.N + n] = vals[e];
    } else if (gemm_geglu()) { // value columns store value * gelu(gate); gate columns nothing
      uint f = geglu_output_col(n);
      if (geglu_is_value(n)) y[m * (pc.N / 2u) + f] = STORE_Y(gemm_geglu_epilogue(vals[e], vals[e + GEGLU_UNIT], f));
    } else {
      float v = gemm_epilogue(vals[e], m, n);
      y[m * pc.N + n] = STORE_Y(v);
#ifndef OUT_F32
      vals[e] = LOAD(STORE(v)); // as stored, for the row statistics below
#endif
    }
  }
#if TN == 8
  // The rows' parts of TN columns (the host asks only with N % TN == 0 and K whole, so the block's
  // columns all lie inside N).
  if (gemm_row_stats())
    [[dont_unroll]] for (uint i = 0; i < TM; ++i) {
      if (m0 + i >= pc.M) break;
      float v[8];
      [[unroll]] for (uint j = 0; j < 8; ++j) v[j] = vals[i * TN + j];
      row_stats[(m0 + i) * (pc.N / TN) + n0 / TN] = row_part8(v);
    }
#endif
}
