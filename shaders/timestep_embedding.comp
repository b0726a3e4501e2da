#version 450
// Sinusoidal timestep embedding (diffusers get_timestep_embedding), y [B, 2 * half]:
//   e_k = fp32(fp32(-ln(max_period)) * k) / (half - freq_shift)   (fp32, correctly rounded)
//   freq_k = exp(e_k), arg_k = fp32(t * freq_k), row = [cos(arg), sin(arg)] (flip) or [sin, cos].
// This follows PyTorch's fp32 recipe step by step. GLSL's own exp / sin / cos are not usable
// here: Vulkan allows exp 3 + 2|x| ulp (~20 ulp at e = -9.2) and sin / cos only 2^-11 absolute,
// and only on [-pi, pi], while arg reaches ~1000 (t = 999). So exp and sin / cos are evaluated
// with explicit Cody-Waite range reductions and short polynomials, all `precise` so the compiler
// neither fuses nor reorders the error-compensating steps.
#include "common/types.glsl"

layout(local_size_x_id = 0) in;
layout(std430, binding = 0) writeonly buffer Y { STORE_T y[]; };

layout(push_constant) uniform Push {
  uint half_dim;
  float t;
  float neg_log_period; // fp32(-ln(max_period))
  float denom;          // half - freq_shift
  uint flip;            // 1: [cos, sin]
} pc;

// Correctly rounded a / b (one Newton step on the hardware quotient; Vulkan's / is 2.5 ulp).
float div_rn(float a, float b) {
  precise float q = a / b;
  precise float r = fma(-q, b, a);
  precise float res = fma(r, 1.0 / b, q);
  return res;
}

// e^x for x in [-88, 88], within ~1 ulp: x = n ln2 + r, |r| <= ln2 / 2, e^r by its degree-7
// Taylor polynomial (truncation < 6e-9 relative), then scaled by 2^n.
float exp_accurate(float x) {
  precise float n = round(x * 1.4426950408889634);
  precise float r = fma(-n, 0.693115234375, x); // ln 2, upper 12 bits: n * hi is exact
  r = fma(-n, 3.194618329871446e-05, r);        // ln 2, next bits
  precise float p = 1.0 / 5040.0;
  p = fma(p, r, 1.0 / 720.0);
  p = fma(p, r, 1.0 / 120.0);
  p = fma(p, r, 1.0 / 24.0);
  p = fma(p, r, 1.0 / 6.0);
  p = fma(p, r, 0.5);
  p = fma(p, r, 1.0);
  p = fma(p, r, 1.0);
  return ldexp(p, int(n));
}

// (sin a, cos a) for |a| < ~6000: a = n pi/2 + r with pi/2 split in three (the first two parts
// have 12 significant bits, so n times them is exact), |r| <= ~pi/4, Taylor polynomials of
// degree 9 (sin) and 10 (cos) on r (truncation < 2e-9), then the quadrant n mod 4.
vec2 sincos_accurate(float a) {
  precise float n = round(a * 0.63661977236758134);
  precise float r = fma(-n, 1.5703125, a);
  r = fma(-n, 4.837512969970703e-04, r);
  r = fma(-n, 7.549790126404332e-08, r);
  precise float r2 = r * r;
  precise float s = 1.0 / 362880.0;
  s = fma(s, r2, -1.0 / 5040.0);
  s = fma(s, r2, 1.0 / 120.0);
  s = fma(s, r2, -1.0 / 6.0);
  s = fma(s * r2, r, r);
  precise float c = -1.0 / 3628800.0;
  c = fma(c, r2, 1.0 / 40320.0);
  c = fma(c, r2, -1.0 / 720.0);
  c = fma(c, r2, 1.0 / 24.0);
  c = fma(c, r2, -0.5);
  c = fma(c, r2, 1.0);
  uint q = uint(int(n)) & 3u;
  if (q == 0u) return vec2(s, c);
  if (q == 1u) return vec2(c, -s);
  if (q == 2u) return vec2(-s, -c);
  return vec2(-c, s);
}

void main() {
  uint k = gl_GlobalInvocationID.x, row = gl_WorkGroupID.y;
  if (k >= pc.half_dim) return;
  precise float e = pc.neg_log_period * float(k);
  float freq = exp_accurate(div_rn(e, pc.denom));
  precise float arg = pc.t * freq;
  vec2 sc = sincos_accurate(arg);
  uint base = row * 2u * pc.half_dim;
  uint first = pc.flip != 0u ? 0u : pc.half_dim; // where cos goes
  y[base + first + k] = STORE(sc.y);
  y[base + (pc.half_dim - first) + k] = STORE(sc.x);
}
