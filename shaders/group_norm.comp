#version 450
// GroupNorm (+ optional SiLU) over token-major x [B, HW, C]: statistics per (batch, group) over
// HW rows x cpg = C / G channels, y = (x - mean) * rstd * gamma[c] + beta[c].
//
// Statistics (direct and split stages): every thread accumulates sums of (x - K) and (x - K)^2
// with K = the first value it reads (shifted data, so a common offset such as 100 +- 1 does not
// cancel the variance), turns them into (count, mean, M2), and partial results are merged with
// Chan's parallel formula.
//
// STAGE_RESIDENT   one workgroup per (group, batch) that holds the whole group in registers: one
//                  dispatch, x read once and y written once. Accesses are EV = 1, 2 or 4
//                  channels (EV divides cpg, so every access lies inside one pixel's group: the
//                  group is a flat list of HW * cpg / EV accesses, and invocation t keeps accesses
//                  t, t + W, ... — consecutive invocations read consecutive bytes of the group,
//                  which in NHWC are cpg-channel runs C apart). Up to NV accesses per invocation
//                  (RES_WORDS 32-bit registers of data); the host sends only groups that fit.
//                  Exact two-pass statistics over the registers: the mean (of data shifted by the
//                  group's first access, so the fp32 sums stay small), then the mean squared
//                  deviation from it, each one workgroup reduction (subgroupAdd, then the
//                  per-subgroup partials through shared memory).
//
// The others: three stages (define STAGE_*), and VEC = 1 or 4 channels per access (4 needs
// C % 4 == 0; the model's widths all are):
//   STAGE_DIRECT   one workgroup per (group, batch) computes the statistics and applies them:
//                  one dispatch, for small groups. VEC = 4 needs cpg % 4 == 0 (accesses then
//                  never straddle two groups).
// The split path, two dispatches over T = ntiles row tiles per batch of tile_rows rows (the last
// tile takes the remainder, up to 2 tile_rows - 1 rows):
//   STAGE_PARTIAL  workgroup (tile k, batch) reduces its tile to per-group (mean, M2). Threads
//                  are (channel vector, row lane): each row is read coalesced, 4 rows in flight
//                  per thread; per-channel statistics go through shared memory to the groups.
//                  The G partials are then written into EVERY tile of the batch (slot k).
//   STAGE_APPLY    workgroup (tile k, batch) merges the T x G partials found in its own tile,
//                  builds a per-channel table (a, d) = (rstd * gamma, beta - mean * a) in shared
//                  memory, then walks its rows x channels flat and coalesced, 4 vectors in flight
//                  per thread: y = x * a + d (+ SiLU).
// The split path has no scratch buffer of its own: it keeps the partials inside y's storage
// (binding 4 is a float view of y's buffer), T x G (mean, M2) pairs from each tile's first whole
// word. Only the tile's own APPLY workgroup overwrites the tile, and only after every invocation
// has read the partials (a barrier separates the two), so no workgroup reads a number another
// has overwritten. The host sizes tiles so that a tile holds T x G pairs.
//
// TABLE_OUT (DIRECT and PARTIAL): the statistics as an fp32 table [B, 2, C] instead of y,
// y = x * table[b][0][c] + table[b][1][c] (SiLU is the reader's), for a kernel that applies the
// norm while it reads x (kernels::group_norm_table: the Winograd input transform). Binding 3
// and 4 are both the table's buffer; the split path's partials follow the table there,
// [B, T, G] (mean, M2) pairs written once. There is no APPLY dispatch: the last PARTIAL
// workgroup of each batch to finish merges them and writes the table, so the table takes one
// level of a recording ordered by levels instead of two (a ~10 us dispatch of two workgroups on
// the UNet step's chain, 13 a step; bench/NOTES.md session 33). Each workgroup counts itself in
// counters[pc.counter + b] (binding 5) after its partials; the one that brings the count to T
// merges, then sets the counter back to zero for the next run (Kernels::take_counters gives every
// recorded call slots of its own, zero before the first run).
#ifdef STAGE_RESIDENT
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#endif
#include "common/types.glsl"

#ifndef VEC
#define VEC 1
#endif
#ifndef EV
#define EV 1
#endif
#if defined(STAGE_RESIDENT) && EV == 4
#define VT vec4
#define STORE_V STORE_T4
#elif defined(STAGE_RESIDENT) && EV == 2
#define VT vec2
#define STORE_V STORE_T2
#elif VEC == 4 && !defined(STAGE_RESIDENT)
#define VT vec4
#define STORE_V STORE_T4
#else
#define VT float
#define STORE_V STORE_T
#endif
// gamma / beta: per access in the resident stage (aligned: EV divides cpg), per channel otherwise.
#ifdef STAGE_RESIDENT
#define STORE_P STORE_V
#else
#define STORE_P STORE_T
#endif

#ifdef STAGE_RESIDENT
// Registers of data per invocation (must match kResidentWords in engine/src/kernels/norm.cpp):
// 48 leaves 16 of the 64 an NVIDIA SM gives each of 1,024 invocations for addresses and sums.
#define RES_WORDS 48
#if defined(DTYPE_F16) && EV == 4
#define ACCESS_WORDS 2
#elif defined(DTYPE_F16)
#define ACCESS_WORDS 1 // a lone fp16 value is counted as a whole register
#else
#define ACCESS_WORDS EV
#endif
#define NV (RES_WORDS / ACCESS_WORDS)
#endif

layout(local_size_x_id = 0) in;
// PARTIAL: entries of the per-(row lane, channel) shared array (>= G too). APPLY: entries of the
// channel table (C / VEC). RESIDENT: accesses per pixel of a group (cpg / EV). DIRECT: unused.
layout(constant_id = 1) const uint CAP = 1;

layout(std430, binding = 0) readonly buffer X { STORE_V x[]; };
layout(std430, binding = 1) readonly buffer Gamma { STORE_P gamma[]; };
layout(std430, binding = 2) readonly buffer Beta { STORE_P beta[]; };
#ifdef TABLE_OUT
layout(std430, binding = 3) writeonly buffer Table { float tab[]; };
#else
layout(std430, binding = 3) writeonly buffer Y { STORE_V y[]; };
#endif
#if defined(TABLE_OUT) && defined(STAGE_PARTIAL)
// Coherent: the last workgroup reads what the others wrote in this dispatch.
layout(std430, binding = 4) coherent buffer WS { float ws[]; }; // the table's buffer as words
layout(std430, binding = 5) coherent buffer Counters { uint counters[]; };
#elif !defined(STAGE_RESIDENT)
layout(std430, binding = 4) buffer WS { float ws[]; }; // y's buffer seen as fp32 words
#endif

layout(push_constant) uniform Push {
  uint HW, C, G, cpg;
  uint tile_rows, ntiles; // split path: rows per tile, tiles per batch
  uint row_lanes;         // PARTIAL: row lanes (row_lanes * min(C / VEC, W) <= W)
  float eps;
  uint silu;
  uint counter; // TABLE_OUT PARTIAL: this call's first counter slot (one per batch)
} pc;

// Split path: rows of tile k (the last one takes the remainder) and the word where tile k's copy
// of the partials starts (TABLE_OUT: the one copy of batch b's, past the table; both its stages
// run B workgroups in y).
uint tile_row_count(uint k) { return k + 1u == pc.ntiles ? pc.HW - k * pc.tile_rows : pc.tile_rows; }
uint partials_word(uint b, uint k) {
#ifdef TABLE_OUT
  return 2u * gl_NumWorkGroups.y * pc.C + 2u * b * pc.ntiles * pc.G;
#endif
  uint first = (b * pc.HW + k * pc.tile_rows) * pc.C; // first element of the tile
#ifdef DTYPE_F16
  return (first + 1u) / 2u; // first whole word
#else
  return first;
#endif
}

// (count, mean, M2) merge, Chan et al.
vec3 merge(vec3 a, vec3 b) {
  if (b.x == 0.0) return a;
  if (a.x == 0.0) return b;
  float n = a.x + b.x;
  float d = b.y - a.y;
  float f = b.x / n;
  return vec3(n, a.y + d * f, a.z + b.z + d * d * a.x * f);
}

VT finish(VT v) { return pc.silu != 0u ? v / (1.0 + exp(-v)) : v; }

#ifdef TABLE_OUT
float component(float v, uint e) { return v; }
float component(vec4 v, uint e) { return v[e]; }
// Channel c's (a, d) of batch b into the table.
void write_table(uint b, uint c, float a, float d) {
  tab[(2u * b) * pc.C + c] = a;
  tab[(2u * b + 1u) * pc.C + c] = d;
}
#endif

#if defined(STAGE_DIRECT)
shared vec3 red[gl_WorkGroupSize.x];

// Chan-merges every invocation's value (power-of-two workgroup); the result is returned to all.
vec3 workgroup_merge(vec3 v) {
  uint t = gl_LocalInvocationID.x;
  red[t] = v;
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = merge(red[t], red[t + s]);
    barrier();
  }
  vec3 r = red[0];
  barrier();
  return r;
}
#endif

#if defined(STAGE_DIRECT) || defined(STAGE_PARTIAL)
// Adds (x - K) and its square over x[i], x[i + step], ... below end to s and ss, four loads in
// flight; returns how many values it read.
uint add_shifted_sums(uint i, uint end, uint step, VT K, inout VT s, inout VT ss) {
  uint count = 0u;
  for (; i + 3u * step < end; i += 4u * step, count += 4u) {
    VT v0 = VT(x[i]) - K, v1 = VT(x[i + step]) - K, v2 = VT(x[i + 2u * step]) - K, v3 = VT(x[i + 3u * step]) - K;
    s += (v0 + v1) + (v2 + v3);
    ss += (v0 * v0 + v1 * v1) + (v2 * v2 + v3 * v3);
  }
  for (; i < end; i += step, ++count) {
    VT v = VT(x[i]) - K;
    s += v;
    ss += v * v;
  }
  return count;
}
#endif

#ifdef STAGE_DIRECT
float first_of(float v) { return v; }
float first_of(vec4 v) { return v.x; }

void main() {
  uint g = gl_WorkGroupID.x, b = gl_WorkGroupID.y, t = gl_LocalInvocationID.x;
  uint W = gl_WorkGroupSize.x;
  // Threads as (access lane, row lane): lanes_c consecutive accesses (VEC channels each) of a
  // row's group, row_lanes rows.
  uint cpgv = pc.cpg / VEC, CV = pc.C / VEC;
  uint lanes_c = min(cpgv, W), row_lanes = W / lanes_c;
  uint jl = t % lanes_c, rl = t / lanes_c;
  bool busy = rl < row_lanes;
  uint base = b * pc.HW * CV + g * cpgv;

  // Sums of (x - K) over every channel this invocation sees, K one scalar (its first value).
  float n = 0.0, K = 0.0;
  VT s = VT(0.0), ss = VT(0.0);
  if (busy) {
    if (rl < pc.HW) K = first_of(VT(x[base + rl * CV + jl]));
    uint step = row_lanes * CV;
    for (uint j = jl; j < cpgv; j += lanes_c)
      n += float(add_shifted_sums(base + rl * CV + j, base + pc.HW * CV + j, step, VT(K), s, ss));
  }
#if VEC == 4
  float s1 = (s.x + s.y) + (s.z + s.w), ss1 = (ss.x + ss.y) + (ss.z + ss.w);
  n *= 4.0;
#else
  float s1 = s, ss1 = ss;
#endif
  float m = n > 0.0 ? s1 / n : 0.0;
  vec3 st = workgroup_merge(vec3(n, K + m, max(ss1 - s1 * m, 0.0)));
  float mean = st.y, rstd = inversesqrt(st.z / st.x + pc.eps);

  if (!busy) return;
  for (uint j = jl; j < cpgv; j += lanes_c) {
    uint c = g * pc.cpg + j * VEC;
#if VEC == 4
    VT a = rstd * vec4(LOAD(gamma[c]), LOAD(gamma[c + 1u]), LOAD(gamma[c + 2u]), LOAD(gamma[c + 3u]));
    VT d = vec4(LOAD(beta[c]), LOAD(beta[c + 1u]), LOAD(beta[c + 2u]), LOAD(beta[c + 3u])) - mean * a;
#else
    VT a = rstd * LOAD(gamma[c]);
    VT d = LOAD(beta[c]) - mean * a;
#endif
#ifdef TABLE_OUT
    if (rl == 0u)
      for (uint e = 0; e < VEC; ++e) write_table(b, c + e, component(a, e), component(d, e));
#else
    for (uint r = rl; r < pc.HW; r += row_lanes) {
      uint i = base + r * CV + j;
      y[i] = STORE_V(finish(VT(x[i]) * a + d));
    }
#endif
  }
}
#endif

#if defined(STAGE_APPLY) || (defined(STAGE_PARTIAL) && defined(TABLE_OUT))
shared vec3 part[gl_WorkGroupSize.x];

// Merges the T x G partials of batch b's copy in tile k (TABLE_OUT: its one copy) into each
// group's (mean, rstd) in part[g]: thread (g, lane) takes tiles lane, lane + lanes, ...; then
// thread g merges the lanes. Every read of the copy happens here, before the barriers that
// precede the first write of y.
void merge_partials(uint b, uint k) {
  uint t = gl_LocalInvocationID.x, W = gl_WorkGroupSize.x;
  // About sqrt(T) lanes per group: as many serial merges per lane as per group afterwards.
  uint lanes = clamp(uint(ceil(sqrt(float(pc.ntiles)))), 1u, W / pc.G); // W / G >= 1: host keeps G <= W
  uint g = t % pc.G, lane = t / pc.G;
  uint src = partials_word(b, k);
  vec3 acc = vec3(0.0);
  if (lane < lanes)
    for (uint j = lane; j < pc.ntiles; j += lanes) {
      uint o = src + 2u * (j * pc.G + g);
      acc = merge(acc, vec3(float(tile_row_count(j) * pc.cpg), ws[o], ws[o + 1u]));
    }
  part[t] = acc;
  barrier();
  if (t < pc.G) {
    vec3 st = part[t];
    for (uint l = 1; l < lanes; ++l) st = merge(st, part[l * pc.G + t]);
    part[t] = vec3(st.y, inversesqrt(st.z / st.x + pc.eps), 0.0); // (mean, rstd)
  }
  barrier();
}

// Channel vector cv's (a, d) = (rstd * gamma, beta - mean * a) from part[] (merge_partials).
void channel_ad(uint cv, out VT a, out VT d) {
  for (uint e = 0; e < VEC; ++e) {
    uint c = cv * VEC + e;
    vec3 ms = part[c / pc.cpg];
    float ae = ms.y * LOAD(gamma[c]);
    float de = LOAD(beta[c]) - ms.x * ae;
#if VEC == 4
    a[e] = ae;
    d[e] = de;
#else
    a = ae;
    d = de;
#endif
  }
}
#endif

#ifdef STAGE_PARTIAL
shared vec2 chstat[CAP]; // (mean, M2) per (row lane, channel) over this tile, later per group
#ifdef TABLE_OUT
shared bool last_of_batch;
#endif

void main() {
  uint k = gl_WorkGroupID.x, b = gl_WorkGroupID.y, t = gl_LocalInvocationID.x;
  uint W = gl_WorkGroupSize.x;
  uint CV = pc.C / VEC; // channel vectors per row
  // Threads as (channel-vector lane, row lane); with CV > W the lanes loop over vectors instead.
  uint lanes_c = min(CV, W), row_lanes = pc.row_lanes;
  uint cl = t % lanes_c, rl = t / lanes_c;
  uint rows = tile_row_count(k);
  uint base = (b * pc.HW + k * pc.tile_rows) * CV;
  if (rl < row_lanes) {
    // Rows rl, rl + row_lanes, ... of the tile: how many this lane sees.
    uint mine = rl < rows ? (rows - rl + row_lanes - 1) / row_lanes : 0u;
    float n = float(mine);
    uint step = row_lanes * CV;
    for (uint cv = cl; cv < CV; cv += lanes_c) {
      uint i = base + rl * CV + cv, end = base + rows * CV + cv;
      VT K = mine > 0u ? VT(x[i]) : VT(0.0);
      VT s = VT(0.0), ss = VT(0.0);
      add_shifted_sums(i + step, end, step, K, s, ss);
      VT m = mine > 0u ? s / n : VT(0.0);
      VT mean = K + m, m2 = max(ss - s * m, VT(0.0));
#if VEC == 4
      for (uint e = 0; e < 4u; ++e) chstat[rl * pc.C + cv * 4u + e] = vec2(mean[e], m2[e]);
#else
      chstat[rl * pc.C + cv] = vec2(mean, m2);
#endif
    }
  }
  barrier();
  // Per (group, row lane): the group's channels have equal counts n there, so mean = average of
  // the channel means and M2 = sum M2 + n sum (mean_c - mean)^2, no division per channel. Then
  // thread g Chan-merges its row lanes (their counts differ by at most one).
  vec2 lane_stat[2];
  for (uint h = 0; h < 2u; ++h) {
    uint i = t + h * W, g = i % pc.G, l = i / pc.G;
    lane_stat[h] = vec2(0.0);
    if (l < row_lanes) {
      float m = 0.0;
      for (uint j = 0; j < pc.cpg; ++j) m += chstat[l * pc.C + g * pc.cpg + j].x;
      m /= float(pc.cpg);
      float m2 = 0.0, dev = 0.0;
      for (uint j = 0; j < pc.cpg; ++j) {
        vec2 cs = chstat[l * pc.C + g * pc.cpg + j];
        m2 += cs.y;
        dev += (cs.x - m) * (cs.x - m);
      }
      float n = float(l < rows ? (rows - l + row_lanes - 1) / row_lanes : 0u);
      lane_stat[h] = vec2(m, m2 + n * dev);
    }
  }
  barrier();
  for (uint h = 0; h < 2u; ++h)
    if (t + h * W < row_lanes * pc.G) chstat[t + h * W] = lane_stat[h];
  barrier();
  vec3 acc = vec3(0.0);
  if (t < pc.G)
    for (uint l = 0; l < row_lanes; ++l) {
      float n = float(l < rows ? (rows - l + row_lanes - 1) / row_lanes : 0u);
      acc = merge(acc, vec3(n * float(pc.cpg), chstat[l * pc.G + t]));
    }
  barrier();
  if (t < pc.G) chstat[t] = acc.yz;
  barrier();
  // Broadcast: partial (k, g) goes to word 2 (k G + g) of every tile's copy (TABLE_OUT: the one).
#ifdef TABLE_OUT
  const uint copies = pc.G;
#else
  const uint copies = pc.ntiles * pc.G;
#endif
  for (uint i = t; i < copies; i += W) {
    uint tile = i / pc.G, g = i - tile * pc.G;
    uint o = partials_word(b, tile) + 2u * (k * pc.G + g);
    ws[o] = chstat[g].x;
    ws[o + 1u] = chstat[g].y;
  }
#ifdef TABLE_OUT
  // The last workgroup of batch b merges every tile's partials into the table (see the top).
  memoryBarrierBuffer(); // this workgroup's partials are visible before it is counted
  barrier();
  if (t == 0u) last_of_batch = atomicAdd(counters[pc.counter + b], 1u) + 1u == pc.ntiles;
  barrier();
  if (!last_of_batch) return; // the whole workgroup: last_of_batch is shared
  memoryBarrierBuffer();      // the other workgroups' partials, counted before this one
  merge_partials(b, 0u);
  for (uint cv = t; cv < pc.C / VEC; cv += W) {
    VT a, d;
    channel_ad(cv, a, d);
    for (uint e = 0; e < VEC; ++e) write_table(b, cv * VEC + e, component(a, e), component(d, e));
  }
  if (t == 0u) counters[pc.counter + b] = 0u; // zero again for the next run
#endif
}
#endif

#ifdef STAGE_APPLY
#ifdef TABLE_OUT
#error "the table's merge runs in its PARTIAL stage's last workgroup"
#endif
shared VT tab_a[CAP], tab_d[CAP]; // per channel vector: y = x * a + d

void main() {
  uint k = gl_WorkGroupID.x, b = gl_WorkGroupID.y, t = gl_LocalInvocationID.x;
  uint W = gl_WorkGroupSize.x;
  uint CV = pc.C / VEC;
  // 1. Merge the T x G partials of this tile's copy.
  merge_partials(b, k);
  // 2. The per-channel table.
  for (uint cv = t; cv < CV; cv += W) {
    VT a, d;
    channel_ad(cv, a, d);
    tab_a[cv] = a;
    tab_d[cv] = d;
  }
  barrier();
  // 3. Flat walk over the tile's rows x CV, W vectors apart: the channel advances by W % CV and
  //    the row by W / CV per step, with one carry (no division). Four vectors in flight.
  uint r1 = k * pc.tile_rows + tile_row_count(k);
  uint cv = t % CV, row = k * pc.tile_rows + t / CV;
  uint dcv = W % CV, drow = W / CV;
  uint base = b * pc.HW * CV;
  while (row < r1) {
    uint idx[4], ch[4];
    bool ok[4];
    for (uint e = 0; e < 4u; ++e) {
      ok[e] = row < r1;
      idx[e] = base + row * CV + cv;
      ch[e] = cv;
      cv += dcv;
      row += drow;
      if (cv >= CV) {
        cv -= CV;
        row += 1u;
      }
    }
    VT v[4];
    for (uint e = 0; e < 4u; ++e) v[e] = ok[e] ? VT(x[idx[e]]) : VT(0.0);
    for (uint e = 0; e < 4u; ++e)
      if (ok[e]) y[idx[e]] = STORE_V(finish(v[e] * tab_a[ch[e]] + tab_d[ch[e]]));
  }
}
#endif

#ifdef STAGE_RESIDENT
shared float red[2u * gl_WorkGroupSize.x]; // per-subgroup partials, one half per reduction
shared VT tab_g[CAP], tab_b[CAP];          // gamma, beta per access position within a pixel

// Sum of v over the workgroup (call in uniform control flow, each `slot` once); every invocation
// gets the same value: each subgroup adds the same partials in the same lanes.
float workgroup_sum(float v, uint slot) {
  float s = subgroupAdd(v);
  uint o = slot * gl_WorkGroupSize.x;
  if (subgroupElect()) red[o + gl_SubgroupID] = s;
  barrier();
  float r = 0.0;
  for (uint i = gl_SubgroupInvocationID; i < gl_NumSubgroups; i += gl_SubgroupSize) r += red[o + i];
  return subgroupAdd(r);
}

float hsum(VT v) { return dot(v, VT(1.0)); }

void main() {
  uint g = gl_WorkGroupID.x, b = gl_WorkGroupID.y, t = gl_LocalInvocationID.x;
  uint W = gl_WorkGroupSize.x;
  uint cpv = pc.cpg / EV, Cv = pc.C / EV; // accesses per pixel of the group, per pixel
  uint nacc = pc.HW * cpv;
  uint base = (b * pc.HW * pc.C + g * pc.cpg) / EV;
  // Accesses t, t + W, ... below nacc: a prefix of the NV slots.
  uint mine = t < nacc ? min((nacc - t + W - 1u) / W, uint(NV)) : 0u;
  for (uint q = t; q < cpv; q += W) {
    tab_g[q] = VT(gamma[g * cpv + q]);
    tab_b[q] = VT(beta[g * cpv + q]);
  } // visible after the first reduction's barrier
  // Access f = t + i W is pixel f / cpv, position f % cpv: stepping by W adds W / cpv pixels and
  // W % cpv positions with one carry, no division per access.
  uint p0 = t / cpv, q0 = t - p0 * cpv, dp = W / cpv, dq = W - dp * cpv;

  // Every load is issued before any is used: NV requests in flight per invocation.
  STORE_V v[NV];
  uint p = p0, q = q0;
  [[unroll]] for (uint i = 0; i < NV; ++i) {
    if (i < mine) v[i] = x[base + p * Cv + q];
    q += dq;
    p += dp;
    if (q >= cpv) {
      q -= cpv;
      p += 1u;
    }
  }
  float n = float(pc.HW * pc.cpg);
  // Mean of the data shifted by the group's first access K (each component is counted nacc
  // times, so the shift adds back as hsum(K) / EV): the sums stay near zero even for data such
  // as 100 +- 1, where unshifted fp32 sums of 1e5 values would lose the mean's low digits.
  VT K = VT(x[base]);
  VT s = VT(0.0);
  [[unroll]] for (uint i = 0; i < NV; ++i)
    if (i < mine) s += VT(v[i]) - K;
  float mean = workgroup_sum(hsum(s), 0u) / n + hsum(K) / float(EV);
  VT ss = VT(0.0);
  [[unroll]] for (uint i = 0; i < NV; ++i)
    if (i < mine) {
      VT d = VT(v[i]) - mean;
      ss += d * d;
    }
  float rstd = inversesqrt(workgroup_sum(hsum(ss), 1u) / n + pc.eps);
  float shift = -mean * rstd;

  p = p0;
  q = q0;
  [[unroll]] for (uint i = 0; i < NV; ++i) {
    if (i < mine) y[base + p * Cv + q] = STORE_V(finish((VT(v[i]) * rstd + shift) * tab_g[q] + tab_b[q]));
    q += dq;
    p += dp;
    if (q >= cpv) {
      q -= cpv;
      p += 1u;
    }
  }
}
#endif
