// Register-tiled portable attention (any Vulkan 1.2 device; included by attention.comp with
// ATTN_TILED), for head sizes up to 64. The tile loop of a flash attention written as two small
// GEMMs on shared memory, each invocation owning a block of both:
//   S = Q Kᵀ   RO query rows x KS keys of the tile     (Qᵀ and Kᵀ in shared memory, d-major)
//   O += P V   RO query rows x 4 columns of the head   (P and V in shared memory)
// Invocation (rg, cg) = (tid / TC, tid % TC) with TC = D / 4 column groups owns rows
// rg*RO .. rg*RO+RO-1 of both, keys cg*KS .. cg*KS+KS-1 of S and columns 4cg .. 4cg+3 of O.
//
// Online softmax per tile: each invocation's row maxima over its KS keys go to shared memory
// (red_sh); every invocation of a row group then reads the TC partials of its rows and computes
// the same new maxima, so no invocation waits on another for them. Row sums stay per invocation
// (its own keys' share, rescaled with the row) and are added up once, at the end.
//
// Measured on an H100 (bench/NOTES.md session 8), UNet level 0 (2x5x9600x13696x64, fp16): the
// one-query-per-invocation kernel (attention_portable.glsl, which reads every K and V vec4 from
// shared memory for 4 multiply-adds) took 23.95 ms. This one: 22.8 ms with 256 invocations and
// RO 4 (254 registers), 20.97 ms once K, V and Q were read 4 elements per load (VEC4); 128
// invocations with RO 8 (170 registers) 28.2 / 26.6 ms, with RO 4 40.9 / 37.1 ms, 64 with RO 8
// 64.4 ms. More invocations per workgroup won every time although fewer registers did not:
// why is not understood (no profiler on the device machine). The 4096-token level: 3.37 ->
// 2.50 ms.
//
// Sizes: Q 4*D*QB, K 4*BK*D, V 4*BK*D, P 4*BK*(QB+4), partials 4*TC*(QB+4) bytes; the variants
// (shaders/variants/attention.cmake) pick ATTN_NT so that they fit 32 KiB (lavapipe) or 48 KiB.
#extension GL_EXT_control_flow_attributes : require
#ifdef ATTN_SG_MAX
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
// ATTN_ROLLED: the two inner product loops stay loops (fewer registers, less latency hiding).
#ifdef ATTN_ROLLED
#define INNER_LOOP [[dont_unroll]]
#else
#define INNER_LOOP
#endif

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
#if (NT % TC) != 0 || (RO % 4) != 0 || (KS != 2 && KS != 4)
#error "ATTN_NT must be a multiple of D / 4, ATTN_RO of 4, ATTN_KS 2 or 4"
#endif
#if KS == 4
#define KVEC vec4
#else
#define KVEC vec2
#endif

layout(local_size_x = NT) in;

#include "common/attention_scalar_io.glsl"
// The same buffers read 4 elements at a time (one 8- or 16-byte load): spec constant VEC4, set
// where every row stride and column offset is a multiple of 4 (attention.cpp).
layout(constant_id = 0) const bool VEC4 = false;
#ifdef DTYPE_F16
#define VEC_T uvec2
#define UNPACK4(u) vec4(unpackHalf2x16((u).x), unpackHalf2x16((u).y))
#else
#define VEC_T vec4
#define UNPACK4(u) (u)
#endif
layout(std430, binding = 0) readonly buffer QBufV { VEC_T q_v[]; };
layout(std430, binding = 1) readonly buffer KBufV { VEC_T k_v[]; };
layout(std430, binding = 2) readonly buffer VBufV { VEC_T v_v[]; };
layout(std430, binding = 3) readonly buffer K2BufV { VEC_T k2_v[]; };
layout(std430, binding = 4) readonly buffer V2BufV { VEC_T v2_v[]; };

shared vec4 q_sh[D * QB / 4];    // Qᵀ: [d][query], pre-scaled into the exp2 domain
shared KVEC k_sh[D * BK / KS];   // Kᵀ: [d][key]
shared vec4 v_sh[BK * D / 4];    // V:  [key][d]
shared vec4 p_sh[BK * QP / 4];   // P:  [key][query]
shared vec4 red_sh[TC * QP / 4]; // per-invocation row partials: [column group][query]

#define LOAD4(buf, base) (VEC4 ? UNPACK4(buf##_v[(base) / 4]) : LOAD4S(buf##_buf, base))

// Key j of the joined sequence [K; K2] (or V), 4 elements from column c of head h; zero past the end.
vec4 load_key(bool value, uint b, uint h, uint j, uint c, uint nkt) {
  c += h * D;
  if (j < pc.nk) {
    uint row = b * pc.nk + j;
    return value ? LOAD4(v, row * pc.v_stride + pc.v_off + c) : LOAD4(k, row * pc.k_stride + pc.k_off + c);
  }
  if (j < nkt) {
    uint row = b * pc.nk2 + (j - pc.nk);
    return value ? LOAD4(v2, row * pc.v2_stride + pc.v2_off + c)
                 : LOAD4(k2, row * pc.k2_stride + pc.k2_off + c);
  }
  return vec4(0);
}

// One float of a shared vector array, by float index.
#define AT(arr, n, i) arr[(i) / (n)][(i) % (n)]

// The next K/V tile travels through registers: loaded from global memory before S = QKᵀ of the
// current tile and stored into shared memory once the tile's last reader is past a barrier, so
// the loads' latency hides behind the arithmetic instead of stalling the workgroup (with one
// 256-invocation workgroup per SM nothing else would run meanwhile).
#define KV_VECS (BK * (D / 4))             // vec4 units per K (or V) tile
#define KV_ITERS ((KV_VECS + NT - 1) / NT) // units per invocation
vec4 k_pre[KV_ITERS], v_pre[KV_ITERS];

void prefetch_tile(uint t0, uint b, uint h, uint nkt) {
  [[unroll]] for (uint p = 0; p < KV_ITERS; ++p) {
    uint idx = gl_LocalInvocationIndex + p * NT;
    if (KV_VECS % NT != 0 && idx >= KV_VECS) break;
    uint kk = idx % BK, d4 = idx / BK;             // Kᵀ: consecutive invocations on consecutive keys
    uint vk = idx / (D / 4), vd4 = idx % (D / 4);  // V: whole rows, consecutive invocations along d
    k_pre[p] = load_key(false, b, h, t0 + kk, d4 * 4, nkt);
    v_pre[p] = load_key(true, b, h, t0 + vk, vd4 * 4, nkt);
  }
}
void store_k_tile() {
  [[unroll]] for (uint p = 0; p < KV_ITERS; ++p) {
    uint idx = gl_LocalInvocationIndex + p * NT;
    if (KV_VECS % NT != 0 && idx >= KV_VECS) break;
    uint kk = idx % BK, d4 = idx / BK;
    [[unroll]] for (uint e = 0; e < 4; ++e) AT(k_sh, KS, (d4 * 4 + e) * BK + kk) = k_pre[p][e];
  }
}
void store_v_tile() {
  [[unroll]] for (uint p = 0; p < KV_ITERS; ++p) {
    uint idx = gl_LocalInvocationIndex + p * NT;
    if (KV_VECS % NT != 0 && idx >= KV_VECS) break;
    v_sh[idx] = v_pre[p];
  }
}

void main() {
  const uint b = gl_WorkGroupID.z, h = gl_WorkGroupID.y;
#ifdef ATTN_SG_MAX
  // ATTN_SG_MAX: where every subgroup is full and at least TC wide, a row group is TC consecutive
  // lanes of one subgroup and its maxima go through shuffles (no shared round trip, one barrier
  // less a tile); the invocation numbering below is then subgroup-major.
  const bool sg_rows = gl_NumSubgroups * gl_SubgroupSize == NT && gl_SubgroupSize >= TC;
  const uint tid = sg_rows ? gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID : gl_LocalInvocationIndex;
#else
  const bool sg_rows = false;
  const uint tid = gl_LocalInvocationIndex;
#endif
  const uint rg = tid / TC, cg = tid % TC;
  const uint q0 = gl_WorkGroupID.x * QB;
  const uint r0 = rg * RO; // this invocation's first row in the block
  const uint nkt = pc.nk + pc.nk2;

  // Qᵀ, consecutive invocations on consecutive queries (distinct banks in the transposed stores).
  for (uint idx = tid; idx < QB * (D / 4); idx += NT) {
    uint r = idx % QB, d4 = idx / QB, qi = q0 + r;
    vec4 x = qi < pc.nq ? LOAD4(q, (b * pc.nq + qi) * pc.q_stride + pc.q_off + h * D + d4 * 4) * pc.scale_log2
                        : vec4(0);
    [[unroll]] for (uint e = 0; e < 4; ++e) AT(q_sh, 4, (d4 * 4 + e) * QB + r) = x[e];
  }

  vec4 o[RO];
  float m[RO], l[RO]; // running max (log2 domain, same in every invocation of the row group), own sum
  [[unroll]] for (uint r = 0; r < RO; ++r) {
    o[r] = vec4(0);
    m[r] = M_INIT;
    l[r] = 0.0;
  }

  const uint kend = pc.causal != 0 ? min(nkt, q0 + QB) : nkt;
  prefetch_tile(0, b, h, nkt);
  store_k_tile();
  store_v_tile();
  barrier(); // Qᵀ and the first tile are in place
  for (uint t0 = 0; t0 < kend; t0 += BK) {
    const bool more = t0 + BK < kend;
    if (more) prefetch_tile(t0 + BK, b, h, nkt); // in flight during S below
    // S block.
    float s[RO][KS];
    [[unroll]] for (uint r = 0; r < RO; ++r)
      [[unroll]] for (uint k = 0; k < KS; ++k) s[r][k] = 0.0;
    INNER_LOOP for (uint d = 0; d < D; ++d) {
      KVEC kv = k_sh[(d * BK + cg * KS) / KS];
      [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4) {
        vec4 qv = q_sh[(d * QB + r0) / 4 + r4];
        [[unroll]] for (uint e = 0; e < 4; ++e)
          [[unroll]] for (uint k = 0; k < KS; ++k) s[r4 * 4 + e][k] = fma(qv[e], kv[k], s[r4 * 4 + e][k]);
      }
    }
    // Masks: keys past the end, and keys after the query (causal).
    [[unroll]] for (uint k = 0; k < KS; ++k) {
      uint j = t0 + cg * KS + k;
      [[unroll]] for (uint r = 0; r < RO; ++r)
        if (j >= nkt || (pc.causal != 0 && j > q0 + r0 + r)) s[r][k] = MASKED;
    }

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
#ifdef ATTN_SG_MAX
      [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4)
        [[unroll]] for (uint lanes = 1; lanes < TC; lanes *= 2)
          tile_max[r4] = max(tile_max[r4], subgroupShuffleXor(tile_max[r4], lanes));
#endif
    } else {
      [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4) red_sh[(cg * QP + r0) / 4 + r4] = tile_max[r4];
      barrier();
      [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4) {
        tile_max[r4] = red_sh[r0 / 4 + r4];
        for (uint c = 1; c < TC; ++c) tile_max[r4] = max(tile_max[r4], red_sh[(c * QP + r0) / 4 + r4]);
      }
    }
    float alpha[RO];
    [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4) {
      [[unroll]] for (uint e = 0; e < 4; ++e) {
        uint r = r4 * 4 + e;
        float m_new = max(m[r], tile_max[r4][e]); // a fully masked tile keeps the old max
        alpha[r] = exp2(m[r] - m_new);
        m[r] = m_new;
      }
    }
    // P = exp2(S - m) -> shared ([key][query]); own row sums.
    float sum[RO];
    [[unroll]] for (uint r = 0; r < RO; ++r) sum[r] = 0.0;
    [[unroll]] for (uint k = 0; k < KS; ++k) {
      [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4) {
        vec4 p;
        [[unroll]] for (uint e = 0; e < 4; ++e) {
          uint r = r4 * 4 + e;
          p[e] = exp2(s[r][k] - m[r]);
          sum[r] += p[e];
        }
        p_sh[((cg * KS + k) * QP + r0) / 4 + r4] = p;
      }
    }
    [[unroll]] for (uint r = 0; r < RO; ++r) {
      l[r] = l[r] * alpha[r] + sum[r];
      o[r] *= alpha[r];
    }
    barrier(); // P is complete, and every S is done with Kᵀ: the next tile's keys may replace it
    if (more) store_k_tile();

    // O += P V.
    INNER_LOOP for (uint kk = 0; kk < BK; ++kk) {
      vec4 vv = v_sh[kk * (D / 4) + cg];
      [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4) {
        vec4 p = p_sh[(kk * QP + r0) / 4 + r4];
        [[unroll]] for (uint e = 0; e < 4; ++e) o[r4 * 4 + e] = fma(vec4(p[e]), vv, o[r4 * 4 + e]);
      }
    }
    barrier(); // every P·V is done with V and P
    if (more) store_v_tile();
  }

  // Row sums: the TC invocations' shares, through the partials area (every invocation is past
  // its last read of red_sh: the loop ends with a barrier).
  [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4)
    red_sh[(cg * QP + r0) / 4 + r4] = vec4(l[r4 * 4], l[r4 * 4 + 1], l[r4 * 4 + 2], l[r4 * 4 + 3]);
  barrier();
  [[unroll]] for (uint r4 = 0; r4 < RO / 4; ++r4) {
    vec4 sum = vec4(0);
    for (uint c = 0; c < TC; ++c) sum += red_sh[(c * QP + r0) / 4 + r4];
    [[unroll]] for (uint e = 0; e < 4; ++e) {
      uint qi = q0 + r0 + r4 * 4 + e;
      if (qi >= pc.nq) continue;
      vec4 y = o[r4 * 4 + e] / sum[e]; // sum >= 1: the row max contributes exp2(0)
      uint base = (b * pc.nq + qi) * (pc.heads * D) + h * D + cg * 4;
      o_buf[base] = STORE(y.x);
      o_buf[base + 1] = STORE(y.y);
      o_buf[base + 2] = STORE(y.z);
      o_buf[base + 3] = STORE(y.w);
    }
  }
}
