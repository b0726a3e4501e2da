#version 450
// Bench-only (zero123pp-bench-mma-ceiling): how fast this driver runs the KHR cooperative-matrix
// GEMM's inner loop with parts of it taken away, to say what bounds gemm_coopmat.comp. Each of
// WARPS_M x WARPS_N subgroups owns an FM x FN block of 16 x 16 fp32 accumulator fragments (2 x 2 on
// 4 x 4 subgroups: the 512-invocation w4x4 tiling) and runs pc.iters K steps of BK (16-deep
// fragment steps):
//   CEIL_MODE 0  the products alone, on operand fragments loaded once (registers only)
//   CEIL_MODE 2  per K step the GEMM's tile store (the BM x BK and BN x BK tiles, 16-byte units),
//                a barrier, the fragment loads from shared memory and the products, a barrier;
//                no global loads (without the stores a compiler may hoist the loads)
//   CEIL_MODE 3  2 without the fragment loads (operands stay in registers)
//   CEIL_MODE 4  no shared memory and no barriers: each subgroup loads its fragments straight from
//                a global buffer (rows of GK halves, the A rows then the B rows of the workgroup
//                tile; every workgroup reads the same ones, so they come from the caches)
// The accumulators are written out at the end so that nothing is optimised away.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define COOPMAT_KHR
#include "common/coopmat.glsl"
#ifndef CEIL_MODE
#define CEIL_MODE 0
#endif
#ifndef WARPS_M
#define WARPS_M 4
#endif
#ifndef WARPS_N
#define WARPS_N 4
#endif
#ifndef FM
#define FM 2
#endif
#ifndef FN
#define FN 2
#endif
#ifndef BK
#define BK 64
#endif
#define NW (WARPS_M * WARPS_N)
#define BM (WARPS_M * FM * 16)
#define BN (WARPS_N * FN * 16)
#define LDS (BK / 8 + 1) // 16-byte units per tile row, padded as in the GEMM
#define ROWS_PER_PASS (NW * 32 / (BK / 8))
layout(local_size_x = NW * 32) in;
layout(std430, binding = 0) writeonly buffer Out { float outv[]; };
layout(std430, binding = 1) readonly buffer Src { uvec4 src[]; }; // (BM + BN) rows of GK halves
#define GK 1024
#define GKU (GK / 8)
layout(push_constant) uniform Push { uint iters; } pc;
shared uvec4 smem[(BM + BN) * LDS];

void main() {
  const uint warp = gl_SubgroupID, warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
  for (uint u = gl_LocalInvocationIndex; u < (BM + BN) * LDS; u += NW * 32)
    smem[u] = uvec4(packHalf2x16(vec2(float(u % 7) * 0.01, 0.02)));
  barrier();
  CM_F32ACC acc[FM][FN];
  [[unroll]] for (int i = 0; i < FM; ++i)
    [[unroll]] for (int j = 0; j < FN; ++j) acc[i][j] = CM_F32ACC(0.0);
  CM_F16A a[FM];
  CM_F16B b[FN];
#if CEIL_MODE != 2 && CEIL_MODE != 4
  [[unroll]] for (int i = 0; i < FM; ++i) cmLoad(a[i], smem, (warp_m * FM * 16 + i * 16) * LDS, LDS, CM_ROW_MAJOR);
  [[unroll]] for (int j = 0; j < FN; ++j)
    cmLoad(b[j], smem, BM * LDS + (warp_n * FN * 16 + j * 16) * LDS, LDS, CM_COL_MAJOR);
#endif
  for (uint it = 0; it < pc.iters; ++it) {
#if CEIL_MODE >= 2
    uvec4 r = uvec4(it);
    uint chunk = gl_LocalInvocationIndex % (BK / 8), row = gl_LocalInvocationIndex / (BK / 8);
    [[unroll]] for (uint p = 0; p < (BM + BN) / ROWS_PER_PASS; ++p) smem[(row + p * ROWS_PER_PASS) * LDS + chunk] = r + uvec4(p);
    barrier();
#endif
    [[unroll]] for (uint kk = 0; kk < BK; kk += 16) {
#if CEIL_MODE == 4
      const uint kg = (it * BK + kk) % GK / 8;
      [[unroll]] for (int i = 0; i < FM; ++i)
        cmLoad(a[i], src, (warp_m * FM * 16 + i * 16) * GKU + kg, GKU, CM_ROW_MAJOR);
      [[unroll]] for (int j = 0; j < FN; ++j)
        cmLoad(b[j], src, (BM + warp_n * FN * 16 + j * 16) * GKU + kg, GKU, CM_COL_MAJOR);
#endif
#if CEIL_MODE == 2
      [[unroll]] for (int i = 0; i < FM; ++i)
        cmLoad(a[i], smem, (warp_m * FM * 16 + i * 16) * LDS + kk / 8, LDS, CM_ROW_MAJOR);
      [[unroll]] for (int j = 0; j < FN; ++j)
        cmLoad(b[j], smem, BM * LDS + (warp_n * FN * 16 + j * 16) * LDS + kk / 8, LDS, CM_COL_MAJOR);
#endif
      [[unroll]] for (int i = 0; i < FM; ++i)
        [[unroll]] for (int j = 0; j < FN; ++j) acc[i][j] = cmMulAdd(a[i], b[j], acc[i][j]);
    }
#if CEIL_MODE >= 2
    barrier();
#endif
  }
  float s = 0.0;
  [[unroll]] for (int i = 0; i < FM; ++i)
    [[unroll]] for (int j = 0; j < FN; ++j)
      [[unroll]] for (int e = 0; e < acc[i][j].length(); ++e) s += acc[i][j][e];
  outv[gl_WorkGroupID.x * NW * 32 + gl_LocalInvocationIndex] = s;
}
