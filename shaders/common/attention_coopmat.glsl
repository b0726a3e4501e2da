// Cooperative-matrix attention path (tensor cores; included by attention.comp with
// ATTN_COOPMAT): NV cooperative matrix, or KHR with COOPMAT_KHR (common/coopmat.glsl).
// fp16 storage and matrix inputs, fp32 accumulators, fp32 softmax.
//
// Fragments are CM_M x CM_N x CM_K (common/coopmat.glsl) on subgroups of SUBGROUP_SIZE
// invocations: any shape the device lists with CM_N and CM_K multiples of 8, one dividing the
// other (16x16x16, NVIDIA's 16x8x16 and 16x8x8, Intel's 8x16x16; 32, 64 or 16 wide). The same
// code for every shape; only the constants differ.
// Workgroup: NW subgroups, each owning R x CM_M query rows for one (head, batch).
// Keys/values stream through a double-buffered shared-memory tile of BK rows (one barrier per
// tile); the next tile is loaded from global memory into registers while the tensor cores work
// on the current one. Per tile and subgroup:
//   S = Q·Kᵀ               R x BK/CM_N fp32 fragments (Q fragments stay in registers throughout)
//   m = rowmax(S)·c        running max per row, alpha = exp2(m_old - m)
//   P = exp2(S·c - m)      in registers; O and the partial row sums are rescaled by alpha
//   O += P·V               P converted to fp16 fragments, then to A operands: in registers under
//                          NV, and under KHR where NV cooperative matrix 2's use conversions are
//                          enabled (COOPMAT_NV_CONVERT) and CM_N = CM_K; through shared memory
//                          otherwise, max(CM_N, CM_K) keys at a time (a slab)
// Which row (and column) an invocation's element i of a fragment holds is implementation-
// defined. The kernel learns it once, by loading a matrix whose entries are their own indices
// (`where`); elements of fragments of one type share that layout, so per-row statistics can be
// applied to the accumulators in registers instead of round-tripping O through shared memory.
// Row reductions then take one of two routes, chosen once per subgroup at run time:
//   QUAD: every invocation's elements lie in rows g and g + 8 with g = lane / 4 (the tensor-core
//         accumulator layout of NVIDIA GPUs, 16-row fragments on 32-wide subgroups): the 4
//         invocations of a row are one quad, so row max and row sum are two shuffles, with no
//         shared memory and no subgroup barrier;
//   generic: elementwise reduction over the key fragments, one CM_M x CM_N matrix per row block
//         through shared memory, one invocation per row.
//
// Tiling, measured on an H200 at the UNet level-0 shape (B 2, 5 heads, Nq 9600, Nk 13696): 8
// subgroups x 16 rows, 64-key tiles: ~145-150 TFLOP/s (SDPA: ~460). 32 rows per subgroup would
// halve the fragment loads per product, but the driver's compiler then spills (2-10x slower);
// 4 subgroups, 32-key tiles and loading the next tile straight into the free stage were all
// slower or equal. Timing with parts removed: S = QKᵀ alone ~190 TFLOP/s, S and P·V without
// softmax or global loads ~200: the shared-memory fragment traffic of 16-row subgroups bounds
// this kernel, not the softmax (~10%) or the global loads (~20%). On an H100 (bench/NOTES.md,
// session 6) converting P in registers instead of the shared-memory round trip took the level-0
// call from 1.83 to 1.66 ms; 32 rows per subgroup with Q read from shared memory per product
// (224-237 registers, 4 subgroups, 32-key tiles) took 2.5-2.7 ms.
//
// Requirements (checked in attention.cpp): D a multiple of CM_N and CM_K (variants: 64, 80), row
// strides and column offsets multiples of 8 elements (16-byte loads), subgroups of SUBGROUP_SIZE.
#include "common/coopmat.glsl"
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_shader_subgroup_shuffle : require

#ifndef DTYPE_F16
#error "the cooperative-matrix attention is fp16 only"
#endif
#ifndef SUBGROUP_SIZE
#define SUBGROUP_SIZE 32
#endif
#if (D % CM_N) != 0 || (D % CM_K) != 0
#error "HEAD_DIM must be a multiple of CM_N and CM_K"
#endif
#if (CM_N % 8) != 0 || ((CM_N % CM_K) != 0 && (CM_K % CM_N) != 0)
#error "CM_N must be a multiple of 8, and CM_N and CM_K multiples of one another"
#endif
// The quad route's layout can only occur with 16-row fragments on 32-wide subgroups.
#if SUBGROUP_SIZE == 32 && CM_M == 16 && !defined(ATTN_FORCE_GENERIC)
#define QUAD_POSSIBLE 1
#else
#define QUAD_POSSIBLE 0
#endif

#ifndef ATTN_NW
#define ATTN_NW 8 // subgroups per workgroup
#endif
#ifndef ATTN_R
#define ATTN_R 1 // 16-row blocks per subgroup
#endif
#ifndef ATTN_BK
#define ATTN_BK 64 // keys per tile
#endif
#define NT (ATTN_NW * SUBGROUP_SIZE)
#define RM (ATTN_R * CM_M)       // query rows per subgroup
#define QB (ATTN_NW * RM)        // queries per workgroup (attention.cpp: coopmat_queries_per_group)
#define NB (ATTN_BK / CM_N)      // key fragments of S per tile
#define NQK (D / CM_K)           // head-dim fragments of Q (A operands of S = QKᵀ)
#define ND (D / CM_N)            // head-dim fragments of O
#define PW (CM_N > CM_K ? CM_N : CM_K) // keys per P slab: SPS S fragments become APS A operands
#define SPS (PW / CM_N)
#define APS (PW / CM_K)
#define NSLAB (ATTN_BK / PW)
#define UR (D / 8)                 // 16-byte units per head row
#define LDK (UR + 1)               // shared row stride in units: +1 so fragment rows hit distinct banks
#define KV_UNITS (ATTN_BK * UR)    // units per K (or V) tile
#define KV_PER_T ((KV_UNITS + NT - 1) / NT) // units each invocation moves per tile (at most)
// Whether every invocation moves KV_PER_T units (head size 64); otherwise the last round is
// guarded (head size 80: 320 units a 32-key tile over 256 invocations).
#define KV_EVEN ((KV_UNITS % NT) == 0)
#define STAGE_UNITS (2 * ATTN_BK * LDK)
// The accumulator layout as the host's probe found it (Kernels::khr_accumulator_quad_upmask,
// specialization constant 0): bit i set where element i of every invocation lies in row lane / 4 +
// 8 of its fragment. Nonzero, the driver compiles the quad route alone with each element's row
// known, so the row statistics need no per-element selections (on an H200 the run-time mask cost
// the loop ~40 instructions a tile: predicate shuffles and selects, bench/NOTES.md session 28). 0:
// learned at run time, as below.
layout(constant_id = 0) const uint QUAD_UPMASK = 0u;
// The running maximum is moved only where a row's new maximum exceeds it by more than this (log2
// units): otherwise P = exp2(S c - m) keeps the old, smaller m, its entries stay below 2^8 (well
// inside fp16), and O and the row sums skip their rescaling, which is the same factor on the
// numerator and the denominator (the lazy rescaling of FlashAttention-4). Quad route only.
#define RESCALE_SLACK 8.0
// Bench-only ablations (kernels::khr_attention_ablations, zero123pp-bench-attn-ceiling --khr;
// wrong results by design): ATTN_ABLATE 1 no exp2 (P = the shifted scores), 2 no O += P·V (nor V's
// fragment loads), 3 no S = QKᵀ (nor K's fragment loads: every score 0), 4 no global loads after
// the first tile (every tile the first one's keys and values), 5 K's fragments loaded row-major
// like V's (the same bytes, transposed: whether S's column-major loads cost more than P·V's).
#ifndef ATTN_ABLATE
#define ATTN_ABLATE 0
#endif
// Scratch rows (units): a CM_M x CM_N fp32 matrix (SLD units a row) or two alternating fp16 P
// slabs (PLD units each), then one unit of row statistics.
#define SLD (CM_N / 4)
#define PLD (PW / 8)
#define LDS ((SLD > 2 * PLD ? SLD : 2 * PLD) + 1)
#define STAT (LDS - 1) // the statistics unit of a scratch row
#define SCR_UNITS (RM * LDS)

layout(local_size_x = NT) in;

layout(std430, binding = 0) readonly buffer QBuf { uvec4 q8[]; };
layout(std430, binding = 1) readonly buffer KBuf { uvec4 k8[]; };
layout(std430, binding = 2) readonly buffer VBuf { uvec4 v8[]; };
layout(std430, binding = 3) readonly buffer K2Buf { uvec4 k28[]; };
layout(std430, binding = 4) readonly buffer V2Buf { uvec4 v28[]; };
layout(std430, binding = 5) writeonly buffer OBuf { uvec4 o8[]; };

// K/V stages (also the Q staging before the loop and the output staging after it), one scratch
// area of R CM_M x CM_N fp32 matrices per subgroup (generic route), the element-index matrix. The
// last unit of scratch row `row` holds that row's statistics in the generic route: x = running max
// (log2 domain), y = this tile's rescale factor, z = 1 / row sum.
#define KV_AREA (2 * STAGE_UNITS) // two stages: one barrier per tile
#define Q_AREA (QB * LDK)
#define SCR_BASE ((KV_AREA) > (Q_AREA) ? (KV_AREA) : (Q_AREA))
#ifdef ATTN_QUAD_ONLY
// The 16-subgroup variant (NVIDIA): the quad route alone, without the generic route's scratch, so
// that 16 subgroups' Q staging and K/V stages fit 48 KiB. Needs the quad layout (the host probes
// it: Kernels::khr_accumulator_rows_in_quads) and P converted in registers.
#if !QUAD_POSSIBLE || !(CM_ACC_TO_A && CM_N == CM_K)
#error "ATTN_QUAD_ONLY needs the quad route and P converted in registers"
#endif
#define IDX_BASE SCR_BASE
#else
#define IDX_BASE (SCR_BASE + ATTN_NW * SCR_UNITS) // the element-index matrix, CM_M x LDS units
#endif
shared uvec4 smem[IDX_BASE + CM_M * LDS];

const float NEG_INF = -1.0 / 0.0;
const float M_INIT = -1.0e30; // finite: exp2(M_INIT - m) is 0, never inf - inf

uint b, h, nkt;
uvec4 kreg[KV_PER_T], vreg[KV_PER_T];

// Loads this invocation's share of tile rows t0 .. t0+BK-1 of the joined sequence [K; K2]
// (zeros past the end: their scores are masked).
void prefetch_k(uint t0) {
  [[unroll]] for (uint p = 0; p < KV_PER_T; ++p) {
    uint idx = gl_LocalInvocationIndex + p * NT;
    if (!KV_EVEN && idx >= KV_UNITS) break;
    uint j = t0 + idx / UR, u = idx % UR;
    if (j < pc.nk) kreg[p] = k8[((b * pc.nk + j) * pc.k_stride + pc.k_off + h * D) / 8 + u];
    else if (j < nkt) kreg[p] = k28[((b * pc.nk2 + j - pc.nk) * pc.k2_stride + pc.k2_off + h * D) / 8 + u];
    else kreg[p] = uvec4(0);
  }
}
void prefetch_v(uint t0) {
  [[unroll]] for (uint p = 0; p < KV_PER_T; ++p) {
    uint idx = gl_LocalInvocationIndex + p * NT;
    if (!KV_EVEN && idx >= KV_UNITS) break;
    uint j = t0 + idx / UR, u = idx % UR;
    if (j < pc.nk) vreg[p] = v8[((b * pc.nk + j) * pc.v_stride + pc.v_off + h * D) / 8 + u];
    else if (j < nkt) vreg[p] = v28[((b * pc.nk2 + j - pc.nk) * pc.v2_stride + pc.v2_off + h * D) / 8 + u];
    else vreg[p] = uvec4(0);
  }
}
void store_k(uint base) {
  [[unroll]] for (uint p = 0; p < KV_PER_T; ++p) {
    uint idx = gl_LocalInvocationIndex + p * NT;
    if (!KV_EVEN && idx >= KV_UNITS) break;
    smem[base + (idx / UR) * LDK + idx % UR] = kreg[p];
  }
}
void store_v(uint base) {
  [[unroll]] for (uint p = 0; p < KV_PER_T; ++p) {
    uint idx = gl_LocalInvocationIndex + p * NT;
    if (!KV_EVEN && idx >= KV_UNITS) break;
    smem[base + ATTN_BK * LDK + (idx / UR) * LDK + idx % UR] = vreg[p];
  }
}

void sync_subgroup() {
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

float quad_max(float x) {
  x = max(x, subgroupShuffleXor(x, 1u));
  return max(x, subgroupShuffleXor(x, 2u));
}
float quad_sum(float x) {
  x += subgroupShuffleXor(x, 1u);
  return x + subgroupShuffleXor(x, 2u);
}

// Sum (or max) of the CM_N fp32 values of the scratch row at `base`.
float scratch_row(uint base, bool take_max) {
  vec4 acc = uintBitsToFloat(smem[base]);
  [[unroll]] for (uint u = 1; u < SLD; ++u) {
    vec4 x = uintBitsToFloat(smem[base + u]);
    acc = take_max ? max(acc, x) : acc + x;
  }
  return take_max ? max(max(acc.x, acc.y), max(acc.z, acc.w)) : (acc.x + acc.y) + (acc.z + acc.w);
}

// Index matrix (entry (r, c) = CM_N r + c) in the workgroup's shared IDX area.
CM_F32ACC element_index() {
  CM_F32ACC m;
  cmLoad(m, smem, IDX_BASE, LDS, CM_ROW_MAJOR);
  return m;
}

// The tile loop and the output, for one route of the row reductions. QUAD is a constant at
// every call site, so each route compiles to straight code with only the registers it needs.
void attend(const bool QUAD, uint upmask, uint warp, uint lane, uint q0) {
  const uint qw = q0 + warp * RM; // first query row of this subgroup
  const uint scr = SCR_BASE + warp * SCR_UNITS;

  CM_F16A qf[ATTN_R][NQK];
  [[unroll]] for (uint r = 0; r < ATTN_R; ++r)
    [[unroll]] for (uint kd = 0; kd < NQK; ++kd)
      cmLoad(qf[r][kd], smem, (warp * RM + r * CM_M) * LDK + kd * (CM_K / 8), LDK, CM_ROW_MAJOR);

  float m_lo[ATTN_R], m_hi[ATTN_R]; // QUAD: running max of rows g and g + 8 (log2 domain)
  [[unroll]] for (uint r = 0; r < ATTN_R; ++r) {
    m_lo[r] = M_INIT;
    m_hi[r] = M_INIT;
  }
  if (!QUAD)
    for (uint row = lane; row < RM; row += gl_SubgroupSize)
      smem[scr + row * LDS + STAT].x = floatBitsToUint(M_INIT);

  CM_F32ACC o[ATTN_R][ND], lsum[ATTN_R];
  [[unroll]] for (uint r = 0; r < ATTN_R; ++r) {
    lsum[r] = CM_F32ACC(0.0);
    [[unroll]] for (uint dn = 0; dn < ND; ++dn) o[r][dn] = CM_F32ACC(0.0);
  }

  const float c = pc.scale_log2;
  const uint kend = pc.causal != 0 ? min(nkt, q0 + QB) : nkt;
  prefetch_k(0);
  prefetch_v(0);
  barrier(); // every subgroup holds its Q fragments: the stages may be overwritten
  uint stage = 0;
  for (uint t0 = 0; t0 < kend; t0 += ATTN_BK) {
    const uint kb = stage * STAGE_UNITS, vb = kb + ATTN_BK * LDK;
    store_k(kb); // this stage was last read two tiles ago, before the previous barrier
    store_v(kb);
    barrier();
    if (t0 + ATTN_BK < kend && ATTN_ABLATE != 4) { // in flight during the matrix work
      prefetch_k(t0 + ATTN_BK);
      prefetch_v(t0 + ATTN_BK);
    }

    // S = Q Kᵀ: K rows are keys with d contiguous, i.e. Kᵀ column-major.
    CM_F32ACC s[ATTN_R][NB];
    [[unroll]] for (uint r = 0; r < ATTN_R; ++r)
      [[unroll]] for (uint n = 0; n < NB; ++n) s[r][n] = CM_F32ACC(0.0);
    [[unroll]] for (uint kd = 0; kd < (ATTN_ABLATE == 3 ? 0 : NQK); ++kd) {
      [[unroll]] for (uint n = 0; n < NB; ++n) {
        CM_F16B kt;
        cmLoad(kt, smem, kb + n * CM_N * LDK + kd * (CM_K / 8), LDK, ATTN_ABLATE == 5 ? CM_ROW_MAJOR : CM_COL_MAJOR);
        [[unroll]] for (uint r = 0; r < ATTN_R; ++r) s[r][n] = cmMulAdd(qf[r][kd], kt, s[r][n]);
      }
    }

    // Masks: keys past the end, and the causal diagonal where this tile crosses it.
    if (t0 + ATTN_BK > nkt || (pc.causal != 0 && t0 + ATTN_BK > qw + 1)) {
      CM_F32ACC where = element_index();
      [[unroll]] for (uint r = 0; r < ATTN_R; ++r)
        [[unroll]] for (uint n = 0; n < NB; ++n)
          [[unroll]] for (int i = 0; i < s[r][n].length(); ++i) {
            uint idx = uint(where[i]);
            uint j = t0 + n * CM_N + idx % CM_N, qi = qw + r * CM_M + idx / CM_N;
            if (j >= nkt || (pc.causal != 0 && j > qi)) s[r][n][i] = NEG_INF;
          }
    }

    CM_F16ACC pf[ATTN_R][NB];
    [[unroll]] for (uint r = 0; r < ATTN_R; ++r) {
      // Row maxima of this tile: elementwise over the key fragments first.
      CM_F32ACC mx = s[r][0];
      [[unroll]] for (uint n = 1; n < NB; ++n)
        [[unroll]] for (int i = 0; i < mx.length(); ++i) mx[i] = max(mx[i], s[r][n][i]);
      CM_F32ACC mrow, arow; // per element: its row's running max and rescale factor
      bool rescale = true;  // the generic route always moves the maximum
      if (QUAD) {
        float lo = NEG_INF, hi = NEG_INF;
        [[unroll]] for (int i = 0; i < mx.length(); ++i) {
          if (((upmask >> i) & 1u) != 0u) hi = max(hi, mx[i]);
          else lo = max(lo, mx[i]);
        }
        float nlo = max(m_lo[r], quad_max(lo) * c), nhi = max(m_hi[r], quad_max(hi) * c); // c > 0
        // Uniform over the subgroup, so that the rescaling below is skipped by a branch.
        rescale = subgroupAny(nlo - m_lo[r] > RESCALE_SLACK || nhi - m_hi[r] > RESCALE_SLACK);
        float alo = 1.0, ahi = 1.0;
        if (rescale) {
          alo = exp2(m_lo[r] - nlo);
          ahi = exp2(m_hi[r] - nhi);
          m_lo[r] = nlo;
          m_hi[r] = nhi;
        }
        [[unroll]] for (int i = 0; i < mx.length(); ++i) {
          bool up = ((upmask >> i) & 1u) != 0u;
          mrow[i] = up ? m_hi[r] : m_lo[r];
          arow[i] = up ? ahi : alo;
        }
      } else {
        cmStore(mx, smem, scr + r * CM_M * LDS, LDS, CM_ROW_MAJOR);
        sync_subgroup();
        for (uint row = lane; row < CM_M; row += gl_SubgroupSize) {
          uint base = scr + (r * CM_M + row) * LDS;
          float m_old = uintBitsToFloat(smem[base + STAT].x);
          float m_new = max(m_old, scratch_row(base, true) * c); // all masked: keeps m_old
          smem[base + STAT].xy = floatBitsToUint(vec2(m_new, exp2(m_old - m_new)));
        }
        sync_subgroup();
        CM_F32ACC where = element_index();
        [[unroll]] for (int i = 0; i < mx.length(); ++i) {
          vec2 stat = uintBitsToFloat(smem[scr + (r * CM_M + uint(where[i]) / CM_N) * LDS + STAT].xy);
          mrow[i] = stat.x;
          arow[i] = stat.y;
        }
      }
      // Rescale O and the partial row sums; P = exp2(S c - m) in registers, then fp16.
      if (rescale) {
        [[unroll]] for (int i = 0; i < lsum[r].length(); ++i) {
          lsum[r][i] *= arow[i];
          [[unroll]] for (uint dn = 0; dn < ND; ++dn) o[r][dn][i] *= arow[i];
        }
      }
      [[unroll]] for (uint n = 0; n < NB; ++n) {
        [[unroll]] for (int i = 0; i < lsum[r].length(); ++i) {
          float p = ATTN_ABLATE == 1 ? fma(s[r][n][i], c, -mrow[i]) : exp2(fma(s[r][n][i], c, -mrow[i]));
          s[r][n][i] = p;
          lsum[r][i] += p;
        }
        pf[r][n] = CM_F16ACC(s[r][n]);
      }
    }
    // O += P V, a slab of PW keys at a time; consecutive products go to different accumulators
    // (no dependent chains).
    [[unroll]] for (uint sl = 0; sl < (ATTN_ABLATE == 2 ? 0 : NSLAB); ++sl) {
      CM_F16A pa[ATTN_R][APS];
#if CM_ACC_TO_A && CM_N == CM_K
      [[unroll]] for (uint r = 0; r < ATTN_R; ++r) pa[r][0] = CM_AS_A(pf[r][sl]);
#else
      // P's fp16 accumulators become A operands through this subgroup's scratch: units 0 .. 2 PLD
      // of its rows, two alternating slab slots (the statistics unit stays). Each slot is
      // rewritten two slabs later, after the next sync, by which point every invocation has
      // loaded it.
      [[unroll]] for (uint r = 0; r < ATTN_R; ++r)
        [[unroll]] for (uint s2 = 0; s2 < SPS; ++s2)
          cmStore(pf[r][sl * SPS + s2], smem, scr + r * CM_M * LDS + (sl & 1u) * PLD + s2 * (CM_N / 8), LDS,
                  CM_ROW_MAJOR);
      sync_subgroup();
      [[unroll]] for (uint r = 0; r < ATTN_R; ++r)
        [[unroll]] for (uint a = 0; a < APS; ++a)
          cmLoad(pa[r][a], smem, scr + r * CM_M * LDS + (sl & 1u) * PLD + a * (CM_K / 8), LDS, CM_ROW_MAJOR);
#endif
      [[unroll]] for (uint a = 0; a < APS; ++a)
        [[unroll]] for (uint dn = 0; dn < ND; ++dn) {
          CM_F16B vf;
          cmLoad(vf, smem, vb + (sl * PW + a * CM_K) * LDK + dn * (CM_N / 8), LDK, CM_ROW_MAJOR);
          [[unroll]] for (uint r = 0; r < ATTN_R; ++r) o[r][dn] = cmMulAdd(pa[r][a], vf, o[r][dn]);
        }
    }
    stage ^= 1u;
  }
#if !(CM_ACC_TO_A && CM_N == CM_K)
  sync_subgroup(); // the last tile's P loads are done before the scratch is written below
#endif

  // 1 / row sum per element (the sum is >= 1: the row max contributes exp2(0)).
  CM_F32ACC inv[ATTN_R];
  [[unroll]] for (uint r = 0; r < ATTN_R; ++r) {
    if (QUAD) {
      float lo = 0.0, hi = 0.0;
      [[unroll]] for (int i = 0; i < lsum[r].length(); ++i) {
        if (((upmask >> i) & 1u) != 0u) hi += lsum[r][i];
        else lo += lsum[r][i];
      }
      float ilo = 1.0 / quad_sum(lo), ihi = 1.0 / quad_sum(hi);
      [[unroll]] for (int i = 0; i < inv[r].length(); ++i) inv[r][i] = ((upmask >> i) & 1u) != 0u ? ihi : ilo;
    } else {
      cmStore(lsum[r], smem, scr + r * CM_M * LDS, LDS, CM_ROW_MAJOR);
      sync_subgroup();
      for (uint row = lane; row < CM_M; row += gl_SubgroupSize) {
        uint base = scr + (r * CM_M + row) * LDS;
        smem[base + STAT].z = floatBitsToUint(1.0 / scratch_row(base, false));
      }
      sync_subgroup();
      CM_F32ACC where = element_index();
      [[unroll]] for (int i = 0; i < inv[r].length(); ++i)
        inv[r][i] = uintBitsToFloat(smem[scr + (r * CM_M + uint(where[i]) / CM_N) * LDS + STAT].z);
    }
  }
  barrier(); // every subgroup is done with the last tile before its memory stages the output

  // O / l -> fp16 -> staging (this subgroup's rows) -> 16-byte stores of whole rows.
  const uint ostage = warp * RM * LDK;
  [[unroll]] for (uint r = 0; r < ATTN_R; ++r) {
    [[unroll]] for (uint dn = 0; dn < ND; ++dn) {
      [[unroll]] for (int i = 0; i < inv[r].length(); ++i) o[r][dn][i] *= inv[r][i];
      CM_F16ACC oh = CM_F16ACC(o[r][dn]);
      cmStore(oh, smem, ostage + r * CM_M * LDK + dn * (CM_N / 8), LDK, CM_ROW_MAJOR);
    }
  }
  sync_subgroup();
  const uint out_row = pc.heads * D / 8; // units per output row
  for (uint idx = lane; idx < RM * UR; idx += gl_SubgroupSize) {
    uint r = idx / UR, u = idx % UR, qi = qw + r;
    if (qi < pc.nq) o8[(b * pc.nq + qi) * out_row + h * UR + u] = smem[ostage + r * LDK + u];
  }
}

void main() {
  b = gl_WorkGroupID.z;
  h = gl_WorkGroupID.y;
  nkt = pc.nk + pc.nk2;
  const uint warp = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint q0 = gl_WorkGroupID.x * QB;

  // Q tile -> shared (zeros past the last query); the element-index matrix -> IDX area.
  for (uint idx = gl_LocalInvocationIndex; idx < QB * UR; idx += NT) {
    uint r = idx / UR, u = idx % UR, qi = q0 + r;
    smem[r * LDK + u] = qi < pc.nq ? q8[((b * pc.nq + qi) * pc.q_stride + pc.q_off + h * D) / 8 + u] : uvec4(0);
  }
  for (uint e = gl_LocalInvocationIndex; e < CM_M * SLD; e += NT) {
    uint r = e / SLD, u = e % SLD;
    smem[IDX_BASE + r * LDS + u] = floatBitsToUint(vec4(CM_N * r + u * 4) + vec4(0, 1, 2, 3));
  }
  barrier();

  // Route choice: QUAD when every element of this invocation lies in row g or g + 8 (g = lane/4);
  // bit i of upmask marks the elements in row g + 8.
  uint upmask = 0;
#if QUAD_POSSIBLE
  CM_F32ACC where = element_index();
  bool quad_ok = gl_SubgroupSize == 32 && where.length() <= 32;
  [[unroll]] for (int i = 0; i < where.length(); ++i) {
    uint row = uint(where[i]) / CM_N, g = lane >> 2;
    quad_ok = quad_ok && (row == g || row == g + 8);
    if (row >= 8) upmask |= 1u << i;
  }
#ifdef ATTN_QUAD_ONLY
  attend(true, QUAD_UPMASK != 0u ? QUAD_UPMASK : upmask, warp, lane, q0);
#else
  if (QUAD_UPMASK != 0u) attend(true, QUAD_UPMASK, warp, lane, q0); // the branch folds per pipeline
  else if (subgroupAll(quad_ok)) attend(true, upmask, warp, lane, q0);
  else attend(false, upmask, warp, lane, q0);
#endif
#else
  attend(false, upmask, warp, lane, q0);
#endif
}
