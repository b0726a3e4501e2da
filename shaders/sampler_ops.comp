#version 450
// The per-step pointwise work of the sampling loop (spec §10.3, §11.3), reading its scalars from
// a small parameter buffer that the host rewrites before each replay of the step recording (so
// the recording never changes). One source, three operations selected by OP_*:
//   OP_REF_INPUT : r = (cond_lat + sigma_ref * noise) * c_in          → UNet write-pass input
//                  (at element `first` of r and noise: one step's rows)
//   OP_MAIN_INPUT: m[b] = x * c_in for each CFG half b                  → UNet read-pass input
//   OP_STEP      : v = v_u + g (v_c - v_u) (or v when one half); x = a x + b v + sigma_up * noise
// x, cond_lat and noise are fp32; r, m and v use the network's storage type (DTYPE_F16 or not).
#include "common/types.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Params {
  float sigma_ref; // add_noise sigma (fp16-rounded like the reference)
  float c_in;      // 1 / sqrt(sigma^2 + 1)
  float a, b;      // x_next = a x + b v + sigma_up noise
  float sigma_up;
  float guidance;
  uint halves;     // 2 with classifier-free guidance, else 1
  uint count;      // elements of one half of the main latent
  uint ref_count;  // elements of the whole reference input (all halves)
} P;

#if defined(OP_REF_INPUT)
layout(std430, binding = 1) readonly buffer Lat { float lat[]; };
layout(std430, binding = 2) readonly buffer Noise { float noise[]; };
layout(std430, binding = 3) writeonly buffer Out { STORE_T r[]; };
// Where one reference pass serves several steps, each step's rows of r (and of its noise) start
// at `first`; cond_lat is the same for every step.
layout(push_constant) uniform Push { uint first; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= P.ref_count) return;
  r[pc.first + i] = STORE((lat[i] + P.sigma_ref * noise[pc.first + i]) * P.c_in);
}
#elif defined(OP_MAIN_INPUT)
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer Out { STORE_T m[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= P.count) return;
  STORE_T v = STORE(x[i] * P.c_in);
  for (uint h = 0; h < P.halves; ++h) m[h * P.count + i] = v;
}
#elif defined(OP_STEP)
layout(std430, binding = 1) buffer X { float x[]; };
layout(std430, binding = 2) readonly buffer V { STORE_T v[]; };
layout(std430, binding = 3) readonly buffer Noise { float noise[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= P.count) return;
  float guided;
  if (P.halves == 2u) {
    float vu = LOAD(v[i]), vc = LOAD(v[P.count + i]);
    guided = vu + P.guidance * (vc - vu);
  } else {
    guided = LOAD(v[i]);
  }
  x[i] = P.a * x[i] + P.b * guided + P.sigma_up * noise[i];
}
#endif
