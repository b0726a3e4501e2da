// Register-tiled portable attention (any Vulkan 1.2 device; included by attention.comp with
// ATTN_TILED), for head sizes up to 64. The tile loop of a flash attention written as two small
// GEMMs on shared memory, each invocation owning a block of both:
//   S = Q Kᵀ   RO query rows x KS keys of the tile     (Q and K in shared memory, d-major)
//   O += P V   RO query rows x 4 columns of the head   (P and V in shared memory)
// Invocation (rg, cg) = (tid / TC, tid % TC) with TC = D / 4 column groups owns rows
// rg*RO .. rg*RO+RO-1 of both, keys cg*KS .. cg*KS+KS-1 of S and columns 4cg .. 4cg+3 of O.
//
// K and V stay in their storage type in shared memory, as pairs of consecutive head elements
// (one uint of two halves, or a vec2 for fp32 models), and become fp32 only in registers: the
// copies are exact, and each 16-bit element costs half the shared-memory bytes of an fp32 one.
// That is what bounds this kernel on GPUs whose shared memory serves 128 bytes a clock against
// 128 fp32 multiply-adds (NVIDIA): an invocation's loads per multiply-add, not its arithmetic. Q,
// read for every tile, is converted to fp32 once, and P stays fp32 (the softmax weights are not
// rounded); P has no padding (a swizzle spreads its stores over the banks), so the fp16 kernel's
// tiles of 64 keys fill exactly 48 KiB at 256 invocations and 32 KiB at 128.
//
// With ATTN_PACKED_PV (fp16 only) P is stored as fp16 and O += P V runs as packed f16vec2
// multiply-adds (two columns each), summed in fp16 over runs of PV_RUN keys and then added into the
// fp32 O, as the tiled GEMM's packed products do (gemm_tiled.comp); the row sums add the same
// rounded weights. With ATTN_PV_PAIRED a run is two fp16 sums of PV_RUN / 2 keys, added in fp16
// before the conversion: the rounding of runs of PV_RUN / 2 plus one addition, at half their
// conversions into O (session 24: -7.5% at level 0 for runs of 32, 119 registers either way).
// S, the softmax and the running maxima stay fp32: an fp16 error in a score is an error in an
// exponent.
//
// Online softmax per tile, in the log2 domain (scores times scale * log2(e), folded into the
// exponent): each invocation's row maxima over its KS keys are combined across the TC
// invocations of its row group through subgroup shuffles where a row group is TC lanes of one
// subgroup (sg_rows), else through partials in P's memory that every invocation of the row group
// reads. Row sums stay per invocation (its own keys' share, rescaled with the row) and are added
// up once, at the end.
//
// The next K/V tile travels through registers: loaded from global memory before S of the
// current tile and stored into shared memory once the tile's last reader is past a barrier.
//
// Measured on an H100 (bench/NOTES.md sessions 8 and 12), UNet level 0 (2x5x9600x13696x64,
// fp16): the one-query-per-invocation kernel (attention_portable.glsl) 23.95 ms; this kernel with
// fp32 tiles (KS 2, 4 barriers a tile) 20.97 ms at 256 invocations (254 registers; 128
// invocations: 26.6-37.1 ms); the prefetch alone changed nothing (21.1 ms), the shuffled row
// maxima -3.4% per step; fp16 Q, K and V with 64-key tiles 15.4 ms (127 registers; 128
// invocations 10% slower per step); fp32 Q 14.6 ms (123 registers); packed P·V 14.0 ms (session
// 13, which also measured and dropped: runs of 8 keys, K fp32 in shared memory, K converted by
// moving bits, and 128 invocations of 4 rows x 8 keys x 8 columns, all slower; P stored twice per
// weight, no faster). Session 24 (13.43 ms at its start; the ablations: S ~6.9 ms, P·V ~4.9,
// global loads ~1.7, softmax ~0.7): the S and P·V loops unrolled here -5.8%, 8-half K/V loads
// -2.9%, no masks on whole tiles -2.9%, together 11.99 ms (119 registers); measured and dropped:
// V's loads after S (+2.7%), lazy rescaling, K fp32 in shared memory, row sums of unrounded
// weights and the run loop unrolled too (all +-0.1%).
//
// Sizes in bytes, with U the bytes of a pair (4 fp16, 8 fp32): Q 4*D*QB, K D/2*BK*U, V BK*D/2*U,
// P 4*BK*QB (2*BK*QB with ATTN_PACKED_PV); the variants (shaders/variants/attention.cmake) pick
// ATTN_NT and ATTN_KS so that they fit 32 KiB (lavapipe) or 48 KiB.
// ATTN_ABLATE=N (bench-only variants for zero123pp-bench-attn-ceiling; wrong results by design):
// the kernel with one part taken away, so that the time it loses says what bounds it:
//   1  no P·V (O stays zero)          2  no S (every score 0)
//   3  no softmax (P = the scaled scores: no row maxima, no exp2, no rescaling)
//   4  no global loads after the first tile (every tile holds the first one's keys and values)
//   5  the tiles alone: global loads, the K, V and P stores and barriers; no S, softmax or P·V
// Whatever a mode leaves out still reaches the output (below), so the compiler keeps the rest.
// Trials (bench-only variants named by Z123_ATTN_TILED_TRIAL, shaders/variants/attention.cmake):
// candidates for the default. pv32: P·V in one fp16 sum over runs of 32 keys, twice the default's
// rounding (session 24: -2% at level 0 against the default, 3 levels in the parity image).
#ifndef ATTN_ABLATE
#define ATTN_ABLATE 0
#endif
#define ABLATE_S (ATTN_ABLATE == 2 || ATTN_ABLATE == 5)
#define ABLATE_SOFTMAX (ATTN_ABLATE == 3 || ATTN_ABLATE == 5)
#define ABLATE_PV (ATTN_ABLATE == 1 || ATTN_ABLATE == 5)
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require

#if D > 64 || (D % 4) != 0
#error "the tiled attention takes head sizes up to 64, multiples of 4"
#endif
#define TC (D / 4)                // column groups: invocations per row group
#define NT ATTN_NT                // invocations
#define TR (NT / TC)              // row groups
#define RO ATTN_RO                // query rows per invocation
#define KS ATTN_KS                // keys of S per invocation
#define QB (TR * RO)              // queries per workgroup (attention.cpp: tiled_queries_per_group)
#define BK (TC * KS)              // keys per tile
#define QP (QB + 4)               // padded row stride of P and the partials (bank spread)
#define DP (D / 2)                // head-element pairs
#if (NT % TC) != 0 || (RO % 4) != 0 || (KS != 2 && KS != 4)
#error "ATTN_NT must be a multiple of D / 4, ATTN_RO of 4, ATTN_KS 2 or 4"
#endif

layout(local_size_x = NT) in;

#include "common/attention_scalar_io.glsl"
// The same buffers read 4 elements at a time (one 8- or 16-byte load): spec constant VEC4, set
// where every row stride and column offset is a multiple of 4 (attention.cpp).
layout(constant_id = 0) const bool VEC4 = false;
// fp16 K and V tiles come from global memory 8 halves (16 bytes) at a time, through this view of
// the buffers where every row stride and column offset is a multiple of 8 (spec constant VEC8,
// attention.cpp), else as two 4-element reads: half the loads and their index arithmetic of
// 4-element units (-3% at level 0 on an H100, session 24). fp32 models keep 4-element units.
#ifdef DTYPE_F16
#define KV_LOADS8
#if (D % 8) != 0
#error "8-half loads take head sizes that are multiples of 8"
#endif
layout(constant_id = 1) const bool VEC8 = false;
#endif

// PAIRS: two pairs of consecutive head elements of one row (4 elements), the unit of the global
// loads and of shared memory. PAIR(x, i): pair i as a vec2.
#ifdef DTYPE_F16
#define PAIRS uvec2
#define PAIR(x, i) unpackHalf2x16((x)[i])
#define PAIRS_OF(v4) uvec2(packHalf2x16((v4).xy), packHalf2x16((v4).zw))
#define PAIR_T uint
#define PAIR_RAW(x, i) (x)[i]
#define SET_PAIR(arr, at, i, p) arr[at][i] = (p)
#else
#define PAIRS vec4
#define PAIR(x, i) ((i) == 0 ? (x).xy : (x).zw)
#define PAIRS_OF(v4) (v4)
#define PAIR_T vec2
#define PAIR_RAW(x, i) PAIR(x, i)
#define SET_PAIR(arr, at, i, p)                                                                    \
  if ((i) == 0)                                                                                    \
    arr[at].xy = (p);                                                                              \
  else                                                                                             \
    arr[at].zw = (p)
#endif
layout(std430, binding = 0) readonly buffer QBufV { PAIRS q_v[]; };
layout(std430, binding = 1) readonly buffer KBufV { PAIRS k_v[]; };
layout(std430, binding = 2) readonly buffer VBufV { PAIRS v_v[]; };
layout(std430, binding = 3) readonly buffer K2BufV { PAIRS k2_v[]; };
layout(std430, binding = 4) readonly buffer V2BufV { PAIRS v2_v[]; };
#ifdef KV_LOADS8
layout(std430, binding = 1) readonly buffer KBufV8 { uvec4 k_v8[]; };
layout(std430, binding = 2) readonly buffer VBufV8 { uvec4 v_v8[]; };
layout(std430, binding = 3) readonly buffer K2BufV8 { uvec4 k2_v8[]; };
layout(std430, binding = 4) readonly buffer V2BufV8 { uvec4 v2_v8[]; };
#endif

shared vec4 q_sh[D * QB / 4];   // Q:  [d][query], fp32 (converted once, read for every tile)
shared PAIRS k_sh[DP * BK / 2];  // K:  [pair of d][key / 2]
shared PAIRS v_sh[BK * D / 4];   // V:  [key][d / 4]
// P: [key][query / 4] with the 4-query column swizzled by key (P_AT: spreads a tile's stores over
// the banks without padding): fp32, or fp16 with ATTN_PACKED_PV (4 halves a column). The row
// partials ([column group][query], QP apart; vec4 units through red_put and red_get) share its
// memory: they are written and read between P's last read (the loop's final barrier) and P's next
// store.
#ifdef ATTN_PACKED_PV
#if !defined(DTYPE_F16) || (BK % PV_RUN) != 0
#error "packed P·V is for fp16 storage, in tiles of whole PV_RUN-key runs"
#endif
#ifdef ATTN_PV_PAIRED
#define PV_HALVES 2
#else
#define PV_HALVES 1
#endif
shared uvec2 p_sh[BK * QB / 4];
void red_put(uint at, vec4 v) {
  p_sh[2 * at] = floatBitsToUint(v.xy);
  p_sh[2 * at + 1] = floatBitsToUint(v.zw);
}
vec4 red_get(uint at) { return uintBitsToFloat(uvec4(p_sh[2 * at], p_sh[2 * at + 1])); }
#define P_BYTES (BK * QB * 2)
#else
shared vec4 p_sh[BK * QB / 4];
void red_put(uint at, vec4 v) { p_sh[at] = v; }
vec4 red_get(uint at) { return p_sh[at]; }
#define P_BYTES (BK * QB * 4)
#endif
#define P_AT(key, col4) ((key) * (QB / 4) + ((col4) ^ (((key) / KS) & 7u)))
#define RED_AT(c, row) (((c) * QP + (row)) / 4)
#if TC * QP * 4 > P_BYTES || (QB / 4) % 8 != 0
#error "the row partials must fit P's memory, and P's swizzle its columns"
#endif

#define LOADP(buf, base) (VEC4 ? buf##_v[(base) / 4] : PAIRS_OF(LOAD4S(buf##_buf, base)))

// Key j of the joined sequence [K; K2] (or V): the unit T that LOADER reads at column c of head h
// (4 elements, or 8); zero past the end.
#define DEFINE_LOAD_KEY(NAME, T, LOADER)                                                           \
  T NAME(bool value, uint b, uint h, uint j, uint c, uint nkt) {                                   \
    c += h * D;                                                                                    \
    if (j < pc.nk) {                                                                               \
      uint row = b * pc.nk + j;                                                                    \
      return value ? LOADER(v, row * pc.v_stride + pc.v_off + c)                                  \
                   : LOADER(k, row * pc.k_stride + pc.k_off + c);                                  \
    }                                                                                              \
    if (j < nkt) {                                                                                 \
      uint row = b * pc.nk2 + (j - pc.nk);                                                         \
      return value ? LOADER(v2, row * pc.v2_stride + pc.v2_off + c)                                \
                   : LOADER(k2, row * pc.k2_stride + pc.k2_off + c);                               \
    }                                                                                              \
    return T(0);                                                                                   \
  }

#ifdef KV_LOADS8
// Units of 8 halves: key j's elements 8c .. 8c+7 of head h, as 4 pairs.
#define LOAD8(buf, base) (VEC8 ? buf##_v8[(base) / 8] : uvec4(LOADP(buf, base), LOADP(buf, (base) + 4)))
DEFINE_LOAD_KEY(load_key8, uvec4, LOAD8)
#define KV_UNITS (BK * (D / 8))              // uvec4 units per K (or V) tile
#define KV_ITERS ((KV_UNITS + NT - 1) / NT)  // units per invocation
uvec4 k_pre[KV_ITERS], v_pre[KV_ITERS];
void prefetch_k(uint t0, uint b, uint h, uint nkt) {
  [[unroll]] for (uint p = 0; p < KV_ITERS; ++p) {
    uint idx = gl_LocalInvocationIndex + p * NT;
    if (KV_UNITS % NT != 0 && idx >= KV_UNITS) break;
    k_pre[p] = load_key8(false, b, h, t0 + idx % BK, (idx / BK) * 8, nkt); // consecutive keys
  }
}
void prefetch_v(uint t0, uint b, uint h, uint nkt) {
  [[unroll]] for (uint p = 0; p < KV_ITERS; ++p) {
    uint idx = gl_LocalInvocationIndex + p * NT;
    if (KV_UNITS % NT != 0 && idx >= KV_UNITS) break;
    v_pre[p] = load_key8(true, b, h, t0 + idx / (D / 8), (idx % (D / 8)) * 8, nkt); // whole rows
  }
}
void store_k_tile() {
  [[unroll]] for (uint p = 0; p < KV_ITERS; ++p) {
    uint idx = gl_LocalInvocationIndex + p * NT;
    if (KV_UNITS % NT != 0 && idx >= KV_UNITS) break;
    uint kk = idx % BK, c = idx / BK;
    [[unroll]] for (uint e = 0; e < 4; ++e) SET_PAIR(k_sh, (4 * c + e) * (BK / 2) + kk / 2, kk % 2, k_pre[p][e]);
  }
}
void store_v_tile() {
  [[unroll]] for (uint p = 0; p < KV_ITERS; ++p) {
    uint idx = gl_LocalInvocationIndex + p * NT;
    if (KV_UNITS % NT != 0 && idx >= KV_UNITS) break;
    v_sh[2 * idx] = v_pre[p].xy;
    v_sh[2 * idx + 1] = v_pre[p].zw;
  }
}
void prefetch_tile(uint t0, uint b, uint h, uint nkt) {
  prefetch_k(t0, b, h, nkt);
  prefetch_v(t0, b, h, nkt);
}
#else
DEFINE_LOAD_KEY(load_key, PAIRS, LOADP)
#define KV_UNITS (BK * (D / 4))              // PAIRS units per K (or V) tile
#define KV_ITERS ((KV_UNITS + NT - 1) / NT)  // units per invocation
PAIRS k_pre[KV_ITERS], v_pre[KV_ITERS];

void prefetch_tile(uint t0, uint b, uint h, uint nkt) {
  [[unroll]] for (uint p = 0; p < KV_ITERS; ++p) {
    uint idx = gl_LocalInvocationIndex + p * NT;
    if (KV_UNITS % NT != 0 && idx >= KV_UNITS) break;
    uint kk = idx % BK, c = idx / BK;            // K: consecutive invocations on consecutive keys
    uint vk = idx / (D / 4), vc = idx % (D / 4); // V: whole rows, consecutive invocations along d
    k_pre[p] = load_key(false, b, h, t0 + kk, c * 4, nkt);
    v_pre[p] = load_key(true, b, h, t0 + vk, vc * 4, nkt);
  }
}
void store_k_tile() {
  [[unroll]] for (uint p = 0; p < KV_ITERS; ++p) {
    uint idx = gl_LocalInvocationIndex + p * NT;
    if (KV_UNITS % NT != 0 && idx >= KV_UNITS) break;
    uint kk = idx % BK, c = idx / BK;
    SET_PAIR(k_sh, (2 * c) * (BK / 2) + kk / 2, kk % 2, PAIR_RAW(k_pre[p], 0));
    SET_PAIR(k_sh, (2 * c + 1) * (BK / 2) + kk / 2, kk % 2, PAIR_RAW(k_pre[p], 1));
  }
}
void store_v_tile() {
  [[unroll]] for (uint p = 0; p < KV_ITERS; ++p) {
    uint idx = gl_LocalInvocationIndex + p * NT;
    if (KV_UNITS % NT != 0 && idx >= KV_UNITS) break;
    v_sh[idx] = v_pre[p];
  }
}
#endif

void main() {
  const uint b = gl_WorkGroupID.z, h = gl_WorkGroupID.y;
  // Where every subgroup is full and at least TC wide, number the invocations subgroup-major: a
  // row group is then TC lanes of one subgroup, and its maxima go through shuffles.
  const bool sg_rows = gl_NumSubgroups * gl_SubgroupSize == NT && gl_SubgroupSize >= TC;
  const uint tid = sg_rows ? gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID : gl_LocalInvocationIndex;
  const uint rg = tid / TC, cg = tid % TC;
  const uint q0 = gl_WorkGroupID.x * QB;
  const uint r0 = rg * RO; // this invocation's first row in the block
  const uint nkt = pc.nk + pc.nk2;
  const float c2 = pc.scale_log2;
  const uint kend = pc.causal != 0 ? min(nkt, q0 + QB) : nkt;
  prefetch_tile(0, b, h, nkt);

  // Q, consecutive invocations on consecutive queries (distinct banks in the stores).
  for (uint idx = gl_LocalInvocationIndex; idx < QB * (D / 4); idx += NT) {
    uint r = idx % QB, c = idx / QB, qi = q0 + r;
    PAIRS x = qi < pc.nq ? LOADP(q, (b * pc.nq + qi) * pc.q_stride + pc.q_off + h * D + c * 4) : PAIRS(0);
    vec4 xf = vec4(PAIR(x, 0), PAIR(x, 1));
    [[unroll]] for (uint e = 0; e < 4; ++e) q_sh[((4 * c + e) * QB + r) / 4][r % 4] = xf[e];
  }

  vec4 o[RO];
  float m[RO], l[RO]; // running max (log2 domain, same in every invocation of the row group), own sum
  [[unroll]] for (uint r = 0; r < RO; ++r) {
    o[r] = vec4(0);
    m[r] = M_INIT;
    l[r] = 0.0;
  }

  store_k_tile();
  store_v_tile();
  barrier(); // Q and the first tile are in place
  for (uint t0 = 0; t0 < kend; t0 += BK) {
    const bool more = t0 + BK < kend;
#if ATTN_ABLATE != 4
    if (more) prefetch_tile(t0 + BK, b, h, nkt); // in flight during S below
#endif

    // S block (unscaled), a pair of head elements at a time.
    float s[RO][KS];
    [[unroll]] for (uint r = 0; r < RO; ++r)
      [[unroll]] for (uint k = 0; k < KS; ++k) s[r][k] = 0.0;
#if ABLATE_S
    o[0].x += PAIR(k_sh[tid % (DP * BK / 2)], 0).x; // the tile's keys still read
#else
    // Unrolled here: the driver left this loop rolled (unrolling it: -6% at level 0, session 24).
    [[unroll]] for (uint dp = 0; dp < DP; ++dp) {
      vec2 kv[KS];
      [[unroll]] for (uint k2 = 0; k2 < KS / 2; ++k2) {
        PAIRS u = k_sh[dp * (BK / 2) + cg * (KS / 2) + k2];
        kv[2 * k2] = PAIR(u, 0);
        kv[2 * k2 + 1] = PAIR(u, 1);
      }
      [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4) {
        vec4 q_even = q_sh[(2 * dp * QB + r0) / 4 + r4], q_odd = q_sh[((2 * dp + 1) * QB + r0) / 4 + r4];
        [[unroll]] for (uint e = 0; e < 4; ++e)
          [[unroll]] for (uint k = 0; k < KS; ++k)
            s[r4 * 4 + e][k] = fma(q_even[e], kv[k].x, fma(q_odd[e], kv[k].y, s[r4 * 4 + e][k]));
      }
    }
#endif
    // Masks: keys past the end, and keys after the query (causal); a whole tile of a non-causal
    // problem skips them (-3% at level 0 on an H100, session 24).
    if (t0 + BK > nkt || pc.causal != 0) {
      [[unroll]] for (uint k = 0; k < KS; ++k) {
        uint j = t0 + cg * KS + k;
        [[unroll]] for (uint r = 0; r < RO; ++r)
          if (j >= nkt || (pc.causal != 0 && j > q0 + r0 + r)) s[r][k] = MASKED;
      }
    }

#if ABLATE_SOFTMAX
    float alpha[RO];
    [[unroll]] for (uint r = 0; r < RO; ++r) alpha[r] = 1.0;
#else
    // This invocation's row maxima, then the row group's: through shuffles (sg_rows), or through
    // the partials in shared memory, which every invocation of the row group reads.
    vec4 tile_max[RO / 4];
    [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4)
      [[unroll]] for (uint e = 0; e < 4; ++e) {
        float x = s[r4 * 4 + e][0];
        [[unroll]] for (uint k = 1; k < KS; ++k) x = max(x, s[r4 * 4 + e][k]);
        tile_max[r4][e] = x;
      }
    if (sg_rows) {
      [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4)
        [[unroll]] for (uint lanes = 1; lanes < TC; lanes *= 2)
          tile_max[r4] = max(tile_max[r4], subgroupShuffleXor(tile_max[r4], lanes));
    } else {
      [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4) red_put(RED_AT(cg, r0) + r4, tile_max[r4]);
      barrier();
      [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4) {
        tile_max[r4] = red_get(RED_AT(0, r0) + r4);
        for (uint c = 1; c < TC; ++c) tile_max[r4] = max(tile_max[r4], red_get(RED_AT(c, r0) + r4));
      }
      barrier(); // every partial is read before P overwrites them
    }
    float alpha[RO];
    [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4) {
      [[unroll]] for (uint e = 0; e < 4; ++e) {
        uint r = r4 * 4 + e;
        // c2 > 0, so the scaled max is the max of the scaled scores; a fully masked tile keeps the
        // old max (MASKED * c2 is far below any real score, or -inf for scales past ~1.1: either
        // way max() keeps m finite and exp2 gives 0).
        float m_new = max(m[r], tile_max[r4][e] * c2);
        alpha[r] = exp2(m[r] - m_new);
        m[r] = m_new;
      }
    }
#endif
    // P = exp2(S c2 - m) -> shared ([key][query]); own row sums.
    float sum[RO];
    [[unroll]] for (uint r = 0; r < RO; ++r) sum[r] = 0.0;
    [[unroll]] for (uint k = 0; k < KS; ++k) {
      [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4) {
        vec4 p;
#if ABLATE_SOFTMAX
        [[unroll]] for (uint e = 0; e < 4; ++e) p[e] = s[r4 * 4 + e][k] * c2;
#elif defined(ATTN_PACKED_PV)
        [[unroll]] for (uint e = 0; e < 4; ++e) p[e] = exp2(fma(s[r4 * 4 + e][k], c2, -m[r4 * 4 + e]));
#endif
#ifdef ATTN_PACKED_PV
        f16vec4 ph = f16vec4(p);
        p = vec4(ph); // the row sums add the weights that P·V multiplies
        [[unroll]] for (uint e = 0; e < 4; ++e) sum[r4 * 4 + e] += p[e];
        p_sh[P_AT(cg * KS + k, r0 / 4 + r4)] = uvec2(packFloat2x16(ph.xy), packFloat2x16(ph.zw));
#else
        [[unroll]] for (uint e = 0; e < 4; ++e) {
          uint r = r4 * 4 + e;
#if !ABLATE_SOFTMAX
          p[e] = exp2(fma(s[r][k], c2, -m[r]));
#endif
          sum[r] += p[e];
        }
        p_sh[P_AT(cg * KS + k, r0 / 4 + r4)] = p;
#endif
      }
    }
    [[unroll]] for (uint r = 0; r < RO; ++r) {
      l[r] = l[r] * alpha[r] + sum[r];
      o[r] *= alpha[r];
    }
    barrier(); // P is complete, and every S is done with K: the next tile's keys may replace it
    if (more) store_k_tile();

    // O += P V.
#if ABLATE_PV
    o[0].y += PAIR(v_sh[tid % (BK * D / 4)], 1).y; // the tile's values still read
#elif defined(ATTN_PACKED_PV)
    for (uint k0 = 0; k0 < BK; k0 += PV_RUN) {
      // acc[h]: columns 4cg, 4cg+1 and 4cg+2, 4cg+3 of each row over half h of this run of keys
      // (ATTN_PV_PAIRED), or over the whole run (one half).
      f16vec2 acc[PV_HALVES][RO][2];
      [[unroll]] for (uint hv = 0; hv < PV_HALVES; ++hv)
        [[unroll]] for (uint r = 0; r < RO; ++r) acc[hv][r][0] = acc[hv][r][1] = f16vec2(0.0hf);
      // The key loop unrolled by the shader, as S's (part of session 24's -6%).
      [[unroll]] for (uint kk = k0; kk < k0 + PV_RUN; ++kk) {
        const uint hv = (kk - k0) / (PV_RUN / PV_HALVES);
        uvec2 u = v_sh[kk * (D / 4) + cg];
        f16vec2 v01 = unpackFloat2x16(u.x), v23 = unpackFloat2x16(u.y);
        [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4) {
          uvec2 pp = p_sh[P_AT(kk, r0 / 4 + r4)];
          f16vec4 p = f16vec4(unpackFloat2x16(pp.x), unpackFloat2x16(pp.y));
          [[unroll]] for (uint e = 0; e < 4; ++e) {
            acc[hv][r4 * 4 + e][0] = fma(f16vec2(p[e]), v01, acc[hv][r4 * 4 + e][0]);
            acc[hv][r4 * 4 + e][1] = fma(f16vec2(p[e]), v23, acc[hv][r4 * 4 + e][1]);
          }
        }
      }
      [[unroll]] for (uint hv = 1; hv < PV_HALVES; ++hv)
        [[unroll]] for (uint r = 0; r < RO; ++r) {
          acc[0][r][0] += acc[hv][r][0];
          acc[0][r][1] += acc[hv][r][1];
        }
      [[unroll]] for (uint r = 0; r < RO; ++r) o[r] += vec4(vec2(acc[0][r][0]), vec2(acc[0][r][1]));
    }
#else
    for (uint kk = 0; kk < BK; ++kk) {
      PAIRS u = v_sh[kk * (D / 4) + cg];
      vec4 vv = vec4(PAIR(u, 0), PAIR(u, 1));
      [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4) {
        vec4 p = p_sh[P_AT(kk, r0 / 4 + r4)];
        [[unroll]] for (uint e = 0; e < 4; ++e) o[r4 * 4 + e] = fma(vec4(p[e]), vv, o[r4 * 4 + e]);
      }
    }
#endif
    barrier(); // every P·V is done with V and P
    if (more) store_v_tile();
  }

  // Row sums: the TC invocations' shares, through the partials area (every invocation is past
  // its last read of P: the loop ends with a barrier).
  [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4)
    red_put(RED_AT(cg, r0) + r4, vec4(l[r4 * 4], l[r4 * 4 + 1], l[r4 * 4 + 2], l[r4 * 4 + 3]));
  barrier();
  [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4) {
    vec4 sum = vec4(0);
    for (uint c = 0; c < TC; ++c) sum += red_get(RED_AT(c, r0) + r4);
    [[unroll]] for (uint e = 0; e < 4; ++e) {
      uint qi = q0 + r0 + r4 * 4 + e;
      if (qi >= pc.nq) continue;
      vec4 y = o[r4 * 4 + e] / sum[e]; // sum >= 1: the row max contributes exp2(0)
#if ATTN_ABLATE != 0
      y += sum[e] * c2 * 1e-20; // keeps the row sums (and through them S and P) live, changing nothing
#endif
      uint base = (b * pc.nq + qi) * (pc.heads * D) + h * D + cg * 4;
      o_buf[base] = STORE(y.x);
      o_buf[base + 1] = STORE(y.y);
      o_buf[base + 2] = STORE(y.z);
      o_buf[base + 3] = STORE(y.w);
    }
  }
}
