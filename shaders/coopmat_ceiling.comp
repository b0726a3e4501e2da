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
//   CEIL_MODE 5  2 with the workgroup split into two independent halves (the first and the last
//                WARPS_M / 2 rows of subgroups), each with its own tiles (BM / 2 x BK and
//                BN x BK) and its own barrier: an arrival counter in shared memory that the
//                half's subgroups spin on, so that one half's products can run while the other
//                waits (what two workgroups per SM would do, within the 128-register cap of one
//                512-invocation workgroup)
//   CEIL_MODE 6  5's split tiles with the workgroup barrier (the same memory, in lockstep)
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
#if CEIL_MODE == 5 || CEIL_MODE == 6
#define HALVES 2
#else
#define HALVES 1
#endif
#define HNW (NW / HALVES)                      // subgroups per half
#define HBM (BM / HALVES)                      // A rows per half
#define HALF_UNITS ((HBM + BN) * LDS)          // one half's tiles
#define ROWS_PER_PASS (HNW * 32 / (BK / 8))
#if HALVES * HALF_UNITS * 16 + 8 > 49152
#error "the tiles exceed 48 KiB of shared memory"
#endif
layout(local_size_x = NW * 32) in;
layout(std430, binding = 0) writeonly buffer Out { float outv[]; };
layout(std430, binding = 1) readonly buffer Src { uvec4 src[]; }; // (BM + BN) rows of GK halves
#define GK 1024
#define GKU (GK / 8)
layout(push_constant) uniform Push { uint iters; } pc;
shared uvec4 smem[HALVES * HALF_UNITS];
shared uint arrivals[HALVES];

// The workgroup barrier, except in mode 5: a barrier for one half, where every subgroup of the
// half adds one arrival (after its shared stores) and spins until the half's count reaches `target`
// (NW / 2 more per barrier; the count only grows, so a subgroup already at the next barrier cannot
// confuse one still spinning here).
void half_barrier(uint hf, inout uint target) {
#if CEIL_MODE == 5
  memoryBarrierShared();
  subgroupBarrier();
  target += HNW;
  if (subgroupElect())
    atomicAdd(arrivals[hf], 1u, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelease);
  // Bounded, so that a broken barrier makes wrong timings rather than a hung GPU.
  for (uint n = 0; n < (1u << 20) &&
                   atomicLoad(arrivals[hf], gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsAcquire) < target;
       ++n) {
  }
  memoryBarrierShared();
#else
  barrier();
#endif
}

void main() {
  const uint warp = gl_SubgroupID, warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
  const uint hf = warp_m / (WARPS_M / HALVES), hm = warp_m % (WARPS_M / HALVES);
  const uint hbase = hf * HALF_UNITS, hidx = gl_LocalInvocationIndex % (HNW * 32);
  uint target = 0;
  for (uint u = gl_LocalInvocationIndex; u < HALVES * HALF_UNITS; u += NW * 32)
    smem[u] = uvec4(packHalf2x16(vec2(float(u % 7) * 0.01, 0.02)));
  if (gl_LocalInvocationIndex < HALVES) arrivals[gl_LocalInvocationIndex] = 0u;
  barrier();
  CM_F32ACC acc[FM][FN];
  [[unroll]] for (int i = 0; i < FM; ++i)
    [[unroll]] for (int j = 0; j < FN; ++j) acc[i][j] = CM_F32ACC(0.0);
  CM_F16A a[FM];
  CM_F16B b[FN];
#if CEIL_MODE == 0 || CEIL_MODE == 3
  [[unroll]] for (int i = 0; i < FM; ++i) cmLoad(a[i], smem, (warp_m * FM * 16 + i * 16) * LDS, LDS, CM_ROW_MAJOR);
  [[unroll]] for (int j = 0; j < FN; ++j)
    cmLoad(b[j], smem, BM * LDS + (warp_n * FN * 16 + j * 16) * LDS, LDS, CM_COL_MAJOR);
#endif
  for (uint it = 0; it < pc.iters; ++it) {
#if CEIL_MODE >= 2
    // Each half's tiles (the whole workgroup's where there is one half).
    uvec4 r = uvec4(it);
    uint chunk = hidx % (BK / 8), row = hidx / (BK / 8);
    [[unroll]] for (uint p = 0; p < (HBM + BN) / ROWS_PER_PASS; ++p)
      smem[hbase + (row + p * ROWS_PER_PASS) * LDS + chunk] = r + uvec4(p);
    half_barrier(hf, target);
#endif
    [[unroll]] for (uint kk = 0; kk < BK; kk += 16) {
#if CEIL_MODE == 4
      const uint kg = (it * BK + kk) % GK / 8;
      [[unroll]] for (int i = 0; i < FM; ++i)
        cmLoad(a[i], src, (warp_m * FM * 16 + i * 16) * GKU + kg, GKU, CM_ROW_MAJOR);
      [[unroll]] for (int j = 0; j < FN; ++j)
        cmLoad(b[j], src, (BM + warp_n * FN * 16 + j * 16) * GKU + kg, GKU, CM_COL_MAJOR);
#endif
#if CEIL_MODE == 2 || CEIL_MODE >= 5
      [[unroll]] for (int i = 0; i < FM; ++i)
        cmLoad(a[i], smem, hbase + (hm * FM * 16 + i * 16) * LDS + kk / 8, LDS, CM_ROW_MAJOR);
      [[unroll]] for (int j = 0; j < FN; ++j)
        cmLoad(b[j], smem, hbase + HBM * LDS + (warp_n * FN * 16 + j * 16) * LDS + kk / 8, LDS, CM_COL_MAJOR);
#endif
      [[unroll]] for (int i = 0; i < FM; ++i)
        [[unroll]] for (int j = 0; j < FN; ++j) acc[i][j] = cmMulAdd(a[i], b[j], acc[i][j]);
    }
#if CEIL_MODE >= 2
    half_barrier(hf, target);
#endif
  }
  float s = 0.0;
  [[unroll]] for (int i = 0; i < FM; ++i)
    [[unroll]] for (int j = 0; j < FN; ++j)
      [[unroll]] for (int e = 0; e < acc[i][j].length(); ++e) s += acc[i][j][e];
  outv[gl_WorkGroupID.x * NW * 32 + gl_LocalInvocationIndex] = s;
}
