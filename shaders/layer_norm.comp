#version 450
// LayerNorm over the last dim: x [M, C] -> y, one row per subgroup (no barriers: the two
// reductions are subgroupAdd), rows_per_wg rows per workgroup. Exact two-pass fp32 statistics:
// the mean first, then the mean of squared deviations, so a large common offset costs no
// precision; the row is read three times (the re-reads hit the cache). VEC = 4 reads 4 channels
// per access (C % 4 == 0). In place (y == x) is safe: each invocation writes only the elements it
// read, after both reductions. Spec constant 1 AFFINE false: y = (x - mean) * rstd alone, gamma
// and beta unread (a norm whose affine part is folded into the projections that read it).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common/types.glsl"

#ifndef VEC
#define VEC 1
#endif
#if VEC == 4
#define VT vec4
#define STORE_V STORE_T4
float hsum(vec4 v) { return (v.x + v.y) + (v.z + v.w); }
#else
#define VT float
#define STORE_V STORE_T
float hsum(float v) { return v; }
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool AFFINE = true;
layout(std430, binding = 0) readonly buffer X { STORE_V x[]; };
layout(std430, binding = 1) readonly buffer Gamma { STORE_V gamma[]; };
layout(std430, binding = 2) readonly buffer Beta { STORE_V beta[]; };
layout(std430, binding = 3) writeonly buffer Y { STORE_V y[]; };

layout(push_constant) uniform Push {
  uint M, CV;       // rows, channel vectors per row
  uint rows_per_wg;
  float eps;
} pc;

void main() {
  // Workgroups beyond 65535 wrap into gl_WorkGroupID.y (the portable limit of one dimension).
  uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  uint first = wg * pc.rows_per_wg, last = min(first + pc.rows_per_wg, pc.M);
  uint lane = gl_SubgroupInvocationID, S = gl_SubgroupSize;
  float inv_c = 1.0 / float(pc.CV * VEC);
  for (uint row = first + gl_SubgroupID; row < last; row += gl_NumSubgroups) { // subgroup-uniform
    uint base = row * pc.CV;
    VT s = VT(0.0);
    for (uint c = lane; c < pc.CV; c += S) s += VT(x[base + c]);
    float mean = subgroupAdd(hsum(s)) * inv_c;
    VT q = VT(0.0);
    for (uint c = lane; c < pc.CV; c += S) {
      VT d = VT(x[base + c]) - mean;
      q += d * d;
    }
    float rstd = inversesqrt(subgroupAdd(hsum(q)) * inv_c + pc.eps);
    for (uint c = lane; c < pc.CV; c += S) {
      VT v = (VT(x[base + c]) - mean) * rstd;
      y[base + c] = STORE_V(AFFINE ? v * VT(gamma[c]) + VT(beta[c]) : v);
    }
  }
}
