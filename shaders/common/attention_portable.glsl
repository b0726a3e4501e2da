// Portable attention path (any Vulkan 1.2 device; included by attention.comp).
//
// One workgroup per (block of ATTN_QB queries, head, batch). Each query is owned by ATTN_DSPLIT
// consecutive invocations, each holding 1/ATTN_DSPLIT of the query row and of the output
// accumulator in registers (vec4 columns part, part + DSPLIT, ... interleaved so the DSPLIT
// invocations of a query read neighbouring shared-memory words, not one bank). Keys and values
// stream through shared memory in tiles of ATTN_BK rows; per tile every invocation computes its
// partial dot products, the DSPLIT partials are summed from shared memory, and the online
// softmax rescales the accumulator once per tile (not once per key).
//
// The scores of a tile go through shared memory rather than a per-invocation array, and the loops
// over a tile's keys are kept rolled: unrolled (with the scores in registers) the D = 64 variant
// takes lavapipe's LLVM minutes to compile; rolled, a register array would be dynamically indexed
// (local memory on GPUs).
//
// Splitting D keeps a 512-wide head (VAE mid attention) inside a small register budget and the
// K/V tiles inside 32 KiB of shared memory; D = 64/80 use DSPLIT = 1.
//
// ATTN_QPT > 1 (queries per invocation; the GPU variant of D = 64 takes 2 with DSPLIT = 2): each
// key and value vec4 read from shared memory then feeds QPT queries. With one query per
// invocation a read feeds 4 multiply-adds, so the kernel is bound by shared-memory issue at about
// a quarter of the arithmetic rate (bench/NOTES.md session 6). An invocation's queries are
// qslot + r * QB / QPT.

#ifndef ATTN_QPT
#define ATTN_QPT 1
#endif
#define DV4 (D / 4)             // vec4 columns per head row
#define NV4 (DV4 / ATTN_DSPLIT) // vec4 columns owned by one invocation
#define QSLOTS (ATTN_QB / ATTN_QPT)
#define WG (QSLOTS * ATTN_DSPLIT)
#define SROW (ATTN_QB * ATTN_DSPLIT) // partial scores per key: one per query and part
#if (ATTN_QB % ATTN_QPT) != 0
#error ATTN_QB must be a multiple of ATTN_QPT
#endif

#if (DV4 % ATTN_DSPLIT) != 0 || (D % 4) != 0
#error HEAD_DIM must be a multiple of 4 * ATTN_DSPLIT
#endif

layout(local_size_x = WG) in;

layout(std430, binding = 0) readonly buffer QBuf { STORE_T q_buf[]; };
layout(std430, binding = 1) readonly buffer KBuf { STORE_T k_buf[]; };
layout(std430, binding = 2) readonly buffer VBuf { STORE_T v_buf[]; };
layout(std430, binding = 3) readonly buffer K2Buf { STORE_T k2_buf[]; };
layout(std430, binding = 4) readonly buffer V2Buf { STORE_T v2_buf[]; };
layout(std430, binding = 5) writeonly buffer OBuf { STORE_T o_buf[]; };

shared vec4 k_sh[ATTN_BK * DV4];
shared vec4 v_sh[ATTN_BK * DV4];
shared float s_sh[ATTN_BK * SROW]; // (partial) scores of the tile, [key][query][part]

// Masked scores: far below any real score, so exp2(masked - max) is exactly 0 without a branch,
// yet finite, so the running max never meets inf - inf.
const float MASKED = -3.0e38;
const float M_INIT = -1.0e30;

#define LOAD4(buf, base) vec4(float(buf[(base)]), float(buf[(base) + 1]), float(buf[(base) + 2]), float(buf[(base) + 3]))

// Stages keys/values t0 .. t0+BK-1 of the joined sequence [K; K2] (zeros past the end).
void load_kv_tile(uint b, uint h, uint t0, uint nkt) {
  for (uint idx = gl_LocalInvocationIndex; idx < ATTN_BK * DV4; idx += WG) {
    uint jj = idx / DV4, c = (idx % DV4) * 4 + h * D;
    uint j = t0 + jj;
    vec4 kv = vec4(0), vv = vec4(0);
    if (j < pc.nk) {
      uint row = b * pc.nk + j;
      kv = LOAD4(k_buf, row * pc.k_stride + pc.k_off + c);
      vv = LOAD4(v_buf, row * pc.v_stride + pc.v_off + c);
    } else if (j < nkt) {
      uint row = b * pc.nk2 + (j - pc.nk);
      kv = LOAD4(k2_buf, row * pc.k2_stride + pc.k2_off + c);
      vv = LOAD4(v2_buf, row * pc.v2_stride + pc.v2_off + c);
    }
    k_sh[idx] = kv;
    v_sh[idx] = vv;
  }
}

// Score of tile key jj (joined-sequence index j) for query qi: the sum of its DSPLIT partials,
// or MASKED past the end / above the causal diagonal.
float score(uint jj, uint j, uint qi, uint qlocal, uint nkt) {
  if (j >= nkt || (pc.causal != 0 && j > qi)) return MASKED;
  float sum = 0.0;
  [[unroll]] for (uint p = 0; p < ATTN_DSPLIT; ++p) sum += s_sh[jj * SROW + qlocal * ATTN_DSPLIT + p];
  return sum;
}

void main() {
  const uint b = gl_WorkGroupID.z, h = gl_WorkGroupID.y;
  const uint tid = gl_LocalInvocationIndex;
  const uint qslot = tid / ATTN_DSPLIT, part = tid % ATTN_DSPLIT;
  const uint q0 = gl_WorkGroupID.x * ATTN_QB;
  const uint nkt = pc.nk + pc.nk2;
  uint qlocal[ATTN_QPT], qi[ATTN_QPT];
  [[unroll]] for (uint r = 0; r < ATTN_QPT; ++r) {
    qlocal[r] = qslot + r * QSLOTS;
    qi[r] = q0 + qlocal[r];
  }

  // The query slices, pre-multiplied by scale*log2(e) so scores come out in the exp2 domain.
  vec4 q[ATTN_QPT][NV4];
  [[unroll]] for (uint r = 0; r < ATTN_QPT; ++r)
    [[unroll]] for (uint k = 0; k < NV4; ++k) {
      uint c = (k * ATTN_DSPLIT + part) * 4;
      q[r][k] = qi[r] < pc.nq ? LOAD4(q_buf, (b * pc.nq + qi[r]) * pc.q_stride + pc.q_off + h * D + c) * pc.scale_log2
                              : vec4(0);
    }

  vec4 acc[ATTN_QPT][NV4];
  float m[ATTN_QPT], l[ATTN_QPT];
  [[unroll]] for (uint r = 0; r < ATTN_QPT; ++r) {
    [[unroll]] for (uint k = 0; k < NV4; ++k) acc[r][k] = vec4(0);
    m[r] = M_INIT;
    l[r] = 0.0;
  }

  // With the causal mask no query of this block sees keys past its last query.
  const uint kend = pc.causal != 0 ? min(nkt, q0 + ATTN_QB) : nkt;
  for (uint t0 = 0; t0 < kend; t0 += ATTN_BK) {
    barrier(); // the previous tile (and s_sh) is no longer read
    load_kv_tile(b, h, t0, nkt);
    barrier();

    // Pass 1: (partial) scores into shared memory, [key][query][part].
    [[dont_unroll]] for (uint jj = 0; jj < ATTN_BK; ++jj) {
      vec4 d4[ATTN_QPT];
      [[unroll]] for (uint r = 0; r < ATTN_QPT; ++r) d4[r] = vec4(0);
      [[unroll]] for (uint k = 0; k < NV4; ++k) {
        vec4 kv = k_sh[jj * DV4 + k * ATTN_DSPLIT + part];
        [[unroll]] for (uint r = 0; r < ATTN_QPT; ++r) d4[r] += q[r][k] * kv;
      }
      [[unroll]] for (uint r = 0; r < ATTN_QPT; ++r)
        s_sh[jj * SROW + qlocal[r] * ATTN_DSPLIT + part] = (d4[r].x + d4[r].y) + (d4[r].z + d4[r].w);
    }
#if ATTN_DSPLIT > 1
    barrier(); // the partials of the other invocations of this query
#endif

    // Pass 2: tile maximum. Pass 3: weights and P·V, one rescale of the accumulator per tile.
    float mt[ATTN_QPT];
    [[unroll]] for (uint r = 0; r < ATTN_QPT; ++r) {
      mt[r] = m[r];
      [[dont_unroll]] for (uint jj = 0; jj < ATTN_BK; ++jj)
        mt[r] = max(mt[r], score(jj, t0 + jj, qi[r], qlocal[r], nkt));
      float alpha = exp2(m[r] - mt[r]);
      l[r] *= alpha;
      [[unroll]] for (uint k = 0; k < NV4; ++k) acc[r][k] *= alpha;
      m[r] = mt[r];
    }
    [[dont_unroll]] for (uint jj = 0; jj < ATTN_BK; ++jj) {
      float p[ATTN_QPT];
      [[unroll]] for (uint r = 0; r < ATTN_QPT; ++r) {
        p[r] = exp2(score(jj, t0 + jj, qi[r], qlocal[r], nkt) - mt[r]);
        l[r] += p[r];
      }
      [[unroll]] for (uint k = 0; k < NV4; ++k) {
        vec4 vv = v_sh[jj * DV4 + k * ATTN_DSPLIT + part];
        [[unroll]] for (uint r = 0; r < ATTN_QPT; ++r) acc[r][k] += p[r] * vv;
      }
    }
  }

  [[unroll]] for (uint r = 0; r < ATTN_QPT; ++r) {
    if (qi[r] >= pc.nq) continue;
    // l >= 1: the row maximum contributes exp2(0).
    const float inv_l = 1.0 / l[r];
    const uint obase = (b * pc.nq + qi[r]) * (pc.heads * D) + h * D;
    [[unroll]] for (uint k = 0; k < NV4; ++k) {
      uint c = obase + (k * ATTN_DSPLIT + part) * 4;
      vec4 o = acc[r][k] * inv_l;
      o_buf[c] = STORE(o.x);
      o_buf[c + 1] = STORE(o.y);
      o_buf[c + 2] = STORE(o.z);
      o_buf[c + 3] = STORE(o.w);
    }
  }
}
