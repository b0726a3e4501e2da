#version 450
// Pointwise unary and binary ops, op selected by a push-constant code (one pipeline per dtype;
// the branch is uniform, so it costs nothing next to the memory traffic). Each invocation handles
// ELEMS elements spaced a workgroup apart, so every load of the workgroup stays coalesced.
//
//   OP_GELU        y = a * Phi(a)                      (exact erf GELU)
//   OP_SILU        y = a * sigmoid(a)
//   OP_SCALE_SHIFT y = alpha * a + beta
//   OP_GEGLU       a [M, 2F] -> y [M, F]: y = a[m, f] * gelu(a[m, F + f])   (inner = F)
//   OP_AXPBY       y = alpha * a + beta * b[bi]         (add: alpha = beta = 1)
//   OP_MUL         y = a * b[bi]
// Broadcast of b (binary ops): bi = i (BCAST_SAME), i % inner (BCAST_LAST: b [C]) or
// (i / outer) * inner + i % inner (BCAST_BATCH: b [B, C] onto a [B, N, C], outer = N * C).
// VEC = 4 processes 4 consecutive elements per access (16 / 8-byte loads); the host picks it when
// count, inner and outer are multiples of 4, and then passes them in vector units.
#include "common/types.glsl"

#ifndef VEC
#define VEC 1
#endif
#if VEC == 4
#define VT vec4
#define STORE_V STORE_T4
#else
#define VT float
#define STORE_V STORE_T
#endif

#define OP_GELU 0u
#define OP_SILU 1u
#define OP_SCALE_SHIFT 2u
#define OP_GEGLU 3u
#define OP_AXPBY 4u
#define OP_MUL 5u

#define BCAST_SAME 0u
#define BCAST_LAST 1u
#define BCAST_BATCH 2u

#define ELEMS 4u

layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer A { STORE_V a[]; };
layout(std430, binding = 1) readonly buffer B { STORE_V b[]; };
layout(std430, binding = 2) writeonly buffer Y { STORE_V y[]; };

layout(push_constant) uniform Push {
  uint count; // output elements (vectors with VEC = 4, like inner and outer)
  uint op;
  uint bcast;
  uint inner; // BCAST_LAST / BCAST_BATCH: C; OP_GEGLU: F
  uint outer; // BCAST_BATCH: N * C
  float alpha;
  float beta;
} pc;

// Phi(x) = 0.5 erfc(-x / sqrt 2). erfc(z), z >= 0, by the Chebyshev-fitted form
// t exp(-z^2 + P(t)), t = 1 / (1 + z / 2), fractional error < 1.2e-7 for all z >= 0 (Numerical
// Recipes, "erfcc"). Taking the small side from erfc keeps the negative tail relatively accurate
// (a plain erf with 1e-7 absolute error would lose it). GLSL exp adds <= 3 + 2|arg| ulp.
VT normal_cdf(VT x) {
  VT z = abs(x) * 0.70710678118654752;
  VT t = 1.0 / (1.0 + 0.5 * z);
  VT p = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
         t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  VT half_erfc = 0.5 * t * exp(p - z * z);
#if VEC == 4
  return mix(half_erfc, 1.0 - half_erfc, greaterThanEqual(x, VT(0.0))); // per-lane select
#else
  return x >= 0.0 ? 1.0 - half_erfc : half_erfc;
#endif
}

VT gelu(VT x) { return x * normal_cdf(x); }
// x / (1 + e^-x): for very negative x, e^-x overflows to inf and the quotient is -0, as it should.
VT silu(VT x) { return x / (1.0 + exp(-x)); }

uint b_index(uint i) {
  if (pc.bcast == BCAST_LAST) return i % pc.inner;
  if (pc.bcast == BCAST_BATCH) return (i / pc.outer) * pc.inner + i % pc.inner;
  return i;
}

void main() {
  // Grids beyond 65535 workgroups wrap into y (portable limit of one dimension).
  uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  uint W = gl_WorkGroupSize.x;
  uint first = wg * W * ELEMS + gl_LocalInvocationID.x;
  for (uint e = 0; e < ELEMS; ++e) {
    uint i = first + e * W;
    if (i >= pc.count) return;
    VT v;
    if (pc.op == OP_GELU) {
      v = gelu(VT(a[i]));
    } else if (pc.op == OP_SILU) {
      v = silu(VT(a[i]));
    } else if (pc.op == OP_SCALE_SHIFT) {
      v = pc.alpha * VT(a[i]) + pc.beta;
    } else if (pc.op == OP_GEGLU) {
      uint m = i / pc.inner, f = i - m * pc.inner;
      uint row = m * 2u * pc.inner;
      v = VT(a[row + f]) * gelu(VT(a[row + pc.inner + f]));
    } else if (pc.op == OP_AXPBY) {
      v = pc.alpha * VT(a[i]) + pc.beta * VT(b[b_index(i)]);
    } else { // OP_MUL
      v = VT(a[i]) * VT(b[b_index(i)]);
    }
    y[i] = STORE_V(v);
  }
}
