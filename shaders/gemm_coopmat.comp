#version 450
// GEMM on cooperative matrices (tensor cores), fp16 storage, fp32 accumulation: NV
// cooperative matrix by default, KHR with COOPMAT_KHR (common/coopmat.glsl; same algorithm).
// A separate source from gemm.comp because the algorithm differs entirely (workgroup-shared
// tiles, subgroup matrix ops); bindings, push constants, conv geometry and the epilogue are
// shared through common/gemm_io.glsl.
//
// Workgroup: WARPS_M x WARPS_N subgroups of SUBGROUP_SIZE invocations computing a BM x BN tile of
// y; each subgroup owns a WM x WN block of CM_M x CM_N fp32 accumulator fragments, stepping K by
// CM_K (common/coopmat.glsl: the fragment shape the device lists; 16 x 16 x 16 by default). K advances in steps of BK: the next
// step's A/B tiles are loaded from global memory into registers while the tensor cores work on
// the current one from shared memory. Out-of-range rows, columns and K (and conv zero padding)
// are stored as zeros in shared memory, so any M, N, K works. The epilogue stages the
// accumulators through shared memory, where each element's (m, n) is known, and writes 8
// halves per store.
// Defines: DTYPE_F16 (required), CONV, COOPMAT_KHR; BM, BN, BK, WARPS_M, WARPS_N, STAGES tune
// the tiling; CM_M, CM_N, CM_K the fragment shape; SUBGROUP_SIZE (default 32) the subgroup width
// the dispatch requires of the pipeline. Nothing else depends on the shape or the width.
// LayerNorm on the input rows (GEMM_LN_INPUT, common/gemm_io.glsl; dense, K whole): before the
// loop, NTHREADS / BM invocations per tile row merge the parts of its statistics (written by the
// GEMM that produced x) into shared memory, where the epilogue reads them; the loop's first
// barrier orders the two. Row statistics of the output (GEMM_ROW_STATS): the four lanes that
// store a row's 32 consecutive columns merge their runs' statistics into one part (subgroup
// tilings whose blocks are whole 32-column runs: all but the narrow one).
// Spec constant 0 VEC8: 16-byte global loads along K (K % 8 == 0, or Cin % 8 == 0 for CONV);
// otherwise element-wise gathers. Constant 9 GROUPED: grouped weights (kernels::linear_grouped).
//
// Measured on an H200 (driver 580, fp16, bias epilogue): the default 128 x 128 x 64 tile with
// 2 x 4 subgroups of 64 x 32 runs the UNet's 19200 x 2560 x 320 projection at ~100 TFLOP/s
// (the same tile doing only matrix ops, no loads, reached ~100-145), 3x3 convs at 45-85. 2 x 2
// subgroups of 64 x 64, BK 32, double buffering or 64-row tiles were 1.5-2x slower. Every loop
// over fragments is [[unroll]]ed: left rolled, the accumulator arrays were indexed dynamically
// and the kernel ran 3x slower.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_clustered : require
#extension GL_EXT_control_flow_attributes : require

#ifndef DTYPE_F16
#error "the cooperative-matrix GEMM is fp16 only"
#endif
#define GEMM_EPI_SPEC_ID 1 // the epilogue fixed per pipeline (common/gemm_io.glsl)
#define GEMM_GEOM_SPEC // and K with the conv geometry (constants 2-8)
#define GEMM_ROW_STATS_BINDING
#include "common/coopmat.glsl"

// Tile configuration (defines so that alternatives can be built and measured).
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 64
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 4
#endif
#ifndef STAGES
#define STAGES 1 // shared-memory buffers; 2 = one barrier per K step (needs BK 32 to fit 48 KiB)
#endif
#ifndef SUBGROUP_SIZE
#define SUBGROUP_SIZE 32
#endif
#define WM (BM / WARPS_M) // rows per subgroup
#define WN (BN / WARPS_N) // columns per subgroup
#define FM (WM / CM_M)
#define FN (WN / CM_N)
#if (WM % CM_M) != 0 || (WN % CM_N) != 0 || (BK % CM_K) != 0 || (WN % 8) != 0
#error "the subgroup block must be whole fragments, and its rows whole 8-column runs"
#endif
#define NTHREADS (WARPS_M * WARPS_N * SUBGROUP_SIZE)
layout(local_size_x = NTHREADS) in;
layout(constant_id = 0) const bool VEC8 = false;
// Grouped weights (pc.w_group_rows, common/gemm_io.glsl) for Winograd convolutions' 16 products,
// true only in the pipelines that run them: elsewhere the loader's extra weight-row index folds
// away (this kernel's loop slowed with code that never ran, bench/NOTES.md session 14).
layout(constant_id = 9) const bool GROUPED = false;
#define GEMM_GROUPED_WEIGHTS GROUPED
#include "common/gemm_tile_loader.glsl"

// Tiles in 16-byte units (8 halves). Rows are padded by one unit (80-byte stride) so the eight
// 16-byte row segments a fragment load touches fall in distinct banks.
#define LDS (CHUNKS_K + 1)
#define B_BASE (BM * LDS)
#define STAGE_UNITS ((BM + BN) * LDS)
// Epilogue staging (fp32, aliases the tiles): per subgroup CM_M rows x WN columns, rows padded
// by 4 floats (one unit).
#define STG (WN / 4 + 1)
#define EPI_UNITS (WARPS_M * WARPS_N * CM_M * STG)
#define EPI_RUNS_PER_LANE ((CM_M * (WN / 8) + SUBGROUP_SIZE - 1) / SUBGROUP_SIZE) // 8-column runs
// The tiles, and after the loop the epilogue staging, which for wide subgroup blocks with short K
// steps (128 x 256 at BK 32) outgrows them.
#if EPI_UNITS > STAGES * STAGE_UNITS
#define SMEM_UNITS EPI_UNITS
#else
#define SMEM_UNITS (STAGES * STAGE_UNITS)
#endif
shared uvec4 smem[SMEM_UNITS];
// GEMM_LN_INPUT: the tile rows' (mean, rstd), from ln_load_rows() to the epilogue.
shared vec2 ln_rows[BM];
// Invocations that merge one row's parts: consecutive lanes, as many as the workgroup holds per
// row up to 4 (a power of two, for the clustered adds), and passes over the rows where it holds
// fewer invocations than rows.
#if (NTHREADS % (4 * BM)) == 0 && (SUBGROUP_SIZE % 4) == 0
#define LN_ROW_THREADS 4
#elif (NTHREADS % (2 * BM)) == 0 && (SUBGROUP_SIZE % 2) == 0
#define LN_ROW_THREADS 2
#else
#define LN_ROW_THREADS 1
#endif
#define LN_ROWS_PER_PASS (NTHREADS / LN_ROW_THREADS)
#define LN_ROW_PASSES ((BM + LN_ROWS_PER_PASS - 1) / LN_ROWS_PER_PASS)
// GEMM_ROW_STATS: parts of 32 columns, four lanes' runs each (kernels::linear_row_stats_cols).
#if (WN % 32) == 0 && (SUBGROUP_SIZE % 4) == 0
#define ROW_STATS_OK
#define ROW_PART_COLS 32u
#endif

void store_tiles(uint base) {
  uint chunk = gl_LocalInvocationIndex % CHUNKS_K;
  uint row = gl_LocalInvocationIndex / CHUNKS_K;
  [[unroll]] for (uint p = 0; p < A_PASSES; ++p) smem[base + (row + p * ROWS_PER_PASS) * LDS + chunk] = ra[p];
  [[unroll]] for (uint p = 0; p < B_PASSES; ++p)
    if (B_ROW_OK(row + p * ROWS_PER_PASS)) smem[base + B_BASE + (row + p * ROWS_PER_PASS) * LDS + chunk] = rb[p];
}

// Before the loop: the tile rows' (mean, rstd) into ln_rows from the parts of their statistics
// (row_stats, pc.ln_part_cols columns each), LN_ROW_THREADS consecutive invocations per row.
void ln_load_rows() {
  uint t = gl_LocalInvocationIndex % LN_ROW_THREADS, parts = G_K / pc.ln_part_cols;
  [[unroll]] for (uint pass = 0; pass < LN_ROW_PASSES; ++pass) {
    uint r = gl_LocalInvocationIndex / LN_ROW_THREADS + pass * LN_ROWS_PER_PASS;
    if (r < BM) { // a row's invocations are all in or all out: the clustered adds see whole clusters
      uint base = min(tile_m0 + r, pc.M - 1u) * parts;
      LnParts s = ln_parts_start(row_stats[base].x);
      for (uint i = t; i < parts; i += LN_ROW_THREADS) ln_parts_add(s, row_stats[base + i]);
      s.s1 = subgroupClusteredAdd(s.s1, LN_ROW_THREADS);
      s.s2 = subgroupClusteredAdd(s.s2, LN_ROW_THREADS);
      if (t == 0u) ln_rows[r] = ln_parts_stats(s, float(G_K));
    }
  }
}

// The column sums of weight rows c .. c+7 (c % 8 == 0), binding 3 read 16 bytes at a time.
void ln_colsum8(uint c, out float cs[8]) {
  vec4 lo = uintBitsToFloat(residual8[c >> 2]), hi = uintBitsToFloat(residual8[(c >> 2) + 1u]);
  cs = float[8](lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w);
}

#ifdef ROW_STATS_OK
// GEMM_ROW_STATS, in uniform control flow: this lane's run o (8 outputs of row m from column n, as
// stored; `stored` false where it stored none) merged with the three lanes beside it into the
// part of row m's columns n - n % 32 .. + 31, which the first of them writes.
void row_stats_part(uint m, uint n, uvec4 o, bool stored) {
  float v[8];
  [[unroll]] for (uint e = 0; e < 4; ++e) {
    vec2 h = unpackHalf2x16(o[e]);
    v[2 * e] = h.x;
    v[2 * e + 1] = h.y;
  }
  vec2 part = stored ? row_part8(v) : vec2(0.0);
  float mean = subgroupClusteredAdd(part.x, 4) * 0.25;
  float d = part.x - mean;
  float m2 = subgroupClusteredAdd(fma(8.0 * d, d, part.y), 4);
  if (stored && (gl_SubgroupInvocationID & 3u) == 0u) row_stats[m * (pc.N / ROW_PART_COLS) + n / ROW_PART_COLS] = vec2(mean, m2);
}
#endif

// Epilogue for 8 consecutive columns n .. n+7 of row m, values v (fp32). Returns whether it stored
// them as one 16-byte run, and that run in `o`.
bool store8(uint m, uint n, float v[8], out uvec4 o) {
  o = uvec4(0u);
  if (m >= pc.M) return false;
  if (SPLIT_K) { // raw partial sums, the reduce kernel does the epilogue
    uint base = (gl_WorkGroupID.z * pc.M + m) * pc.N + n;
    [[unroll]] for (uint e = 0; e < 8; ++e)
      if (n + e < pc.N) y_partial[base + e] = v[e];
    return false;
  }
  bool vec = (EPI & EPI_N8) != 0u && n + 8 <= pc.N;
  if (gemm_ln()) {
    vec2 stats = ln_rows[m - tile_m0];
    if (vec) {
      float cs[8];
      ln_colsum8(n, cs);
      [[unroll]] for (uint e = 0; e < 8; ++e) v[e] = ln_apply(v[e], stats, cs[e]);
    } else {
      [[unroll]] for (uint e = 0; e < 8; ++e) v[e] = gemm_ln_apply(v[e], stats, min(n + e, pc.N - 1u));
    }
  }
  if (!vec) {
    if ((EPI & EPI_N8) != 0u) return false; // a run wholly past N: nothing to store
    [[unroll]] for (uint e = 0; e < 8; ++e)
      if (n + e < pc.N) y[m * pc.N + n + e] = STORE(gemm_epilogue(v[e], m, n + e));
    return false;
  }
  if ((EPI & GEMM_HAS_BIAS) != 0u) {
    uvec4 b = bias8[n >> 3];
    [[unroll]] for (uint e = 0; e < 8; e += 2) {
      vec2 f = vec2(unpackFloat2x16(b[e >> 1]));
      v[e] += f.x;
      v[e + 1] += f.y;
    }
  }
  uint act = (EPI >> GEMM_ACT_SHIFT) & 0xffu;
  [[unroll]] for (uint e = 0; e < 8; ++e) {
    if (act == GEMM_ACT_GELU) v[e] = gemm_gelu(v[e]);
    else if (act == GEMM_ACT_SILU) v[e] = v[e] / (1.0 + exp(-v[e]));
  }
  uint idx = (m * pc.N + n) >> 3;
  if ((EPI & GEMM_HAS_RESIDUAL) != 0u) {
    uvec4 r = residual8[idx];
    [[unroll]] for (uint e = 0; e < 8; e += 2) {
      vec2 f = vec2(unpackFloat2x16(r[e >> 1]));
      v[e] += f.x;
      v[e + 1] += f.y;
    }
  }
  o = uvec4(pack2(v[0], v[1]), pack2(v[2], v[3]), pack2(v[4], v[5]), pack2(v[6], v[7]));
  y8[idx] = o;
  return true;
}

#if (WN % (2 * GEGLU_UNIT)) == 0
#define GEGLU_OK // every subgroup block holds whole value/gate run pairs (all tilings but the narrow)
// GEGLU epilogue for the value run at virtual columns c .. c+7 of row m (v) and its gate run (g):
// 8 consecutive outputs (F % 16 == 0, so always one 16-byte store).
void store8_geglu(uint m, uint c, float v[8], float g[8]) {
  if (m >= pc.M || c >= pc.N) return;
  uint f = geglu_output_col(c);
  if (gemm_ln()) { // the value and the gate from their own weight rows
    vec2 stats = ln_rows[m - tile_m0];
    float cv[8], cg[8];
    ln_colsum8(f, cv);
    ln_colsum8(pc.N / 2u + f, cg);
    [[unroll]] for (uint e = 0; e < 8; ++e) {
      v[e] = ln_apply(v[e], stats, cv[e]);
      g[e] = ln_apply(g[e], stats, cg[e]);
    }
  }
  if ((EPI & GEMM_HAS_BIAS) != 0u) {
    uvec4 bv = bias8[f >> 3], bg = bias8[(pc.N / 2u + f) >> 3];
    [[unroll]] for (uint e = 0; e < 8; e += 2) {
      vec2 fv = vec2(unpackFloat2x16(bv[e >> 1])), fg = vec2(unpackFloat2x16(bg[e >> 1]));
      v[e] += fv.x;
      v[e + 1] += fv.y;
      g[e] += fg.x;
      g[e + 1] += fg.y;
    }
  }
  float o[8];
  [[unroll]] for (uint e = 0; e < 8; ++e) o[e] = v[e] * gemm_gelu(g[e]);
  y8[(m * (pc.N / 2u) + f) >> 3] = uvec4(pack2(o[0], o[1]), pack2(o[2], o[3]), pack2(o[4], o[5]), pack2(o[6], o[7]));
}
#endif

// The 8 staged fp32 values at shared-memory unit `unit` (two uvec4).
void staged8(uint unit, out float v[8]) {
  uvec4 lo = smem[unit], hi = smem[unit + 1];
  v = float[8](uintBitsToFloat(lo.x), uintBitsToFloat(lo.y), uintBitsToFloat(lo.z), uintBitsToFloat(lo.w),
               uintBitsToFloat(hi.x), uintBitsToFloat(hi.y), uintBitsToFloat(hi.z), uintBitsToFloat(hi.w));
}

void main() {
  // With split K, z is the K range, and the few row tiles all fit in y.
  uint m_tile = SPLIT_K ? gl_WorkGroupID.y : gemm_m_tile();
  uint k_begin = SPLIT_K ? gl_WorkGroupID.z * G_K_CHUNK : 0u;
  uint k_end = SPLIT_K ? min(G_K, k_begin + G_K_CHUNK) : G_K;
  tile_m0 = m_tile * BM;
  tile_n0 = gl_WorkGroupID.x * BN;
  if (tile_m0 >= pc.M) return; // whole workgroup leaves together: barriers stay uniform

  uint warp = gl_SubgroupID;
  uint warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;

  init_tile_rows();

  CM_F32ACC acc[FM][FN];
  [[unroll]] for (int i = 0; i < FM; ++i)
    [[unroll]] for (int j = 0; j < FN; ++j) acc[i][j] = CM_F32ACC(0.0);

  // k_chunk is a multiple of BK, so a K step never straddles two ranges; loads zero-fill past K.
  load_tiles(k_begin);
  if (gemm_ln()) ln_load_rows(); // its loads in flight with the first tiles'

  uint stage = 0;
  CM_F16A a[FM];
  CM_F16B b[FN];
  for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
    uint base = stage * STAGE_UNITS;
    store_tiles(base);
    barrier();
    if (k0 + BK < k_end) load_tiles(k0 + BK); // in flight during the matrix ops below
    [[unroll]] for (uint kk = 0; kk < BK; kk += CM_K) {
      [[unroll]] for (int i = 0; i < FM; ++i)
        cmLoad(a[i], smem, base + (warp_m * WM + i * CM_M) * LDS + kk / 8, LDS, CM_ROW_MAJOR);
      // W tile rows are output columns with K contiguous: B = W^T read column-major.
      [[unroll]] for (int j = 0; j < FN; ++j)
        cmLoad(b[j], smem, base + B_BASE + (warp_n * WN + j * CM_N) * LDS + kk / 8, LDS, CM_COL_MAJOR);
      [[unroll]] for (int i = 0; i < FM; ++i)
        [[unroll]] for (int j = 0; j < FN; ++j) acc[i][j] = cmMulAdd(a[i], b[j], acc[i][j]);
    }
    // With two buffers the next step writes the other one, which every subgroup finished
    // reading before the barrier above; one buffer must be drained first.
    if (STAGES == 1) barrier();
    stage = (stage + 1) % STAGES;
  }
  barrier(); // the epilogue staging reuses the tile memory

  // Epilogue, one fragment row (CM_M x WN per subgroup) at a time through shared memory: the
  // lanes take its 8-column runs in row order (consecutive lanes, consecutive 32-byte stores),
  // as many passes as the subgroup's width needs. Each subgroup stages in its own area, so
  // subgroup barriers order its stores and loads: the subgroups run on unevenly instead of
  // stopping the workgroup twice per fragment row.
  uint lane = gl_SubgroupInvocationID;
  uint stg = warp * CM_M * STG;
  [[unroll]] for (int i = 0; i < FM; ++i) {
    [[unroll]] for (int j = 0; j < FN; ++j) cmStore(acc[i][j], smem, stg + j * (CM_N / 4), STG, CM_ROW_MAJOR);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    // A constant trip count: a loop the compiler cannot unroll would leave the enclosing one
    // rolled too, and the accumulators indexed dynamically (in memory: ~3x slower on an H100).
#ifdef GEGLU_OK
    if (gemm_geglu()) { // a constant per pipeline: each lane takes a value run and its gate run
      [[unroll]] for (uint t = 0; t < (EPI_RUNS_PER_LANE + 1) / 2; ++t) {
        uint pair = lane + t * SUBGROUP_SIZE; // value runs are the even-numbered pairs of 8 ...
        if (pair < CM_M * (WN / 16)) {
          uint r = pair / (WN / 16), p = pair % (WN / 16);
          uint q = p / (GEGLU_UNIT / 8) * (2 * GEGLU_UNIT / 8) + p % (GEGLU_UNIT / 8); // ... of each 2 x unit
          uint unit = stg + r * STG + q * 2;
          float v[8], g[8];
          staged8(unit, v);
          staged8(unit + GEGLU_UNIT / 4, g); // the gate run, GEGLU_UNIT columns (4 per unit) on
          store8_geglu(tile_m0 + warp_m * WM + i * CM_M + r, tile_n0 + warp_n * WN + q * 8, v, g);
        }
      }
    } else
#endif
    {
      [[unroll]] for (uint t = 0; t < EPI_RUNS_PER_LANE; ++t) {
        uint run = lane + t * SUBGROUP_SIZE;
        uint m = 0u, n = 0u;
        uvec4 o = uvec4(0u);
        bool stored = false;
        if (run < CM_M * (WN / 8)) {
          uint r = run / (WN / 8), q = run % (WN / 8);
          float v[8];
          staged8(stg + r * STG + q * 2, v);
          m = tile_m0 + warp_m * WM + i * CM_M + r;
          n = tile_n0 + warp_n * WN + q * 8;
          stored = store8(m, n, v, o);
        }
#ifdef ROW_STATS_OK
        if (gemm_row_stats()) row_stats_part(m, n, o, stored);
#endif
      }
    }
    subgroupMemoryBarrierShared(); // every lane has read the staging before it is overwritten
    subgroupBarrier();
  }
}
