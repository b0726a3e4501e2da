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

#define DV4 (D / 4)             // vec4 columns per head row
#define NV4 (DV4 / ATTN_DSPLIT) // vec4 columns owned by one invocation
#define WG (ATTN_QB * ATTN_DSPLIT)

#if (DV4 % ATTN_DSPLIT) != 0 || (D % 4) != 0
#error HEAD_DIM must be a multiple of 4 * ATTN_DSPLIT
#endif

layout(local_size_x = WG) in;

#include "common/attention_scalar_io.glsl"

shared vec4 k_sh[ATTN_BK * DV4];
shared vec4 v_sh[ATTN_BK * DV4];
shared float s_sh[ATTN_BK * WG]; // (partial) scores of the tile, [key][invocation]

// Stages keys/values t0 .. t0+BK-1 of the joined sequence [K; K2] (zeros past the end).
void load_kv_tile(uint b, uint h, uint t0, uint nkt) {
  for (uint idx = gl_LocalInvocationIndex; idx < ATTN_BK * DV4; idx += WG) {
    uint jj = idx / DV4, c = (idx % DV4) * 4 + h * D;
    uint j = t0 + jj;
    vec4 kv = vec4(0), vv = vec4(0);
    if (j < pc.nk) {
      uint row = b * pc.nk + j;
      kv = LOAD4S(k_buf, row * pc.k_stride + pc.k_off + c);
      vv = LOAD4S(v_buf, row * pc.v_stride + pc.v_off + c);
    } else if (j < nkt) {
      uint row = b * pc.nk2 + (j - pc.nk);
      kv = LOAD4S(k2_buf, row * pc.k2_stride + pc.k2_off + c);
      vv = LOAD4S(v2_buf, row * pc.v2_stride + pc.v2_off + c);
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
  [[unroll]] for (uint p = 0; p < ATTN_DSPLIT; ++p) sum += s_sh[jj * WG + qlocal * ATTN_DSPLIT + p];
  return sum;
}

void main() {
  const uint b = gl_WorkGroupID.z, h = gl_WorkGroupID.y;
  const uint tid = gl_LocalInvocationIndex;
  const uint qlocal = tid / ATTN_DSPLIT, part = tid % ATTN_DSPLIT;
  const uint q0 = gl_WorkGroupID.x * ATTN_QB;
  const uint qi = q0 + qlocal;
  const bool q_valid = qi < pc.nq;
  const uint nkt = pc.nk + pc.nk2;

  // The query slice, pre-multiplied by scale*log2(e) so scores come out in the exp2 domain.
  vec4 q[NV4];
  [[unroll]] for (uint k = 0; k < NV4; ++k) {
    uint c = (k * ATTN_DSPLIT + part) * 4;
    q[k] = q_valid ? LOAD4S(q_buf, (b * pc.nq + qi) * pc.q_stride + pc.q_off + h * D + c) * pc.scale_log2 : vec4(0);
  }

  vec4 acc[NV4];
  [[unroll]] for (uint k = 0; k < NV4; ++k) acc[k] = vec4(0);
  float m = M_INIT, l = 0.0;

  // With the causal mask no query of this block sees keys past its last query.
  const uint kend = pc.causal != 0 ? min(nkt, q0 + ATTN_QB) : nkt;
  for (uint t0 = 0; t0 < kend; t0 += ATTN_BK) {
    barrier(); // the previous tile (and s_sh) is no longer read
    load_kv_tile(b, h, t0, nkt);
    barrier();

    // Pass 1: (partial) scores into shared memory, [key][invocation] so a warp writes one row.
    [[dont_unroll]] for (uint jj = 0; jj < ATTN_BK; ++jj) {
      vec4 d4 = vec4(0);
      [[unroll]] for (uint k = 0; k < NV4; ++k) d4 += q[k] * k_sh[jj * DV4 + k * ATTN_DSPLIT + part];
      s_sh[jj * WG + tid] = (d4.x + d4.y) + (d4.z + d4.w);
    }
#if ATTN_DSPLIT > 1
    barrier(); // the partials of the other invocations of this query
#endif

    // Pass 2: tile maximum. Pass 3: weights and P·V, one rescale of the accumulator per tile.
    float mt = m;
    [[dont_unroll]] for (uint jj = 0; jj < ATTN_BK; ++jj) mt = max(mt, score(jj, t0 + jj, qi, qlocal, nkt));
    float alpha = exp2(m - mt);
    l *= alpha;
    [[unroll]] for (uint k = 0; k < NV4; ++k) acc[k] *= alpha;
    [[dont_unroll]] for (uint jj = 0; jj < ATTN_BK; ++jj) {
      float p = exp2(score(jj, t0 + jj, qi, qlocal, nkt) - mt);
      l += p;
      [[unroll]] for (uint k = 0; k < NV4; ++k) acc[k] += p * v_sh[jj * DV4 + k * ATTN_DSPLIT + part];
    }
    m = mt;
  }

  if (!q_valid) return;
  // l >= 1: the row maximum contributes exp2(0).
  const float inv_l = 1.0 / l;
  const uint obase = (b * pc.nq + qi) * (pc.heads * D) + h * D;
  [[unroll]] for (uint k = 0; k < NV4; ++k) {
    uint c = obase + (k * ATTN_DSPLIT + part) * 4;
    vec4 o = acc[k] * inv_l;
    o_buf[c] = STORE(o.x);
    o_buf[c + 1] = STORE(o.y);
    o_buf[c + 2] = STORE(o.z);
    o_buf[c + 3] = STORE(o.w);
  }
}
