#version 450
// The decoded image to 8-bit RGBA, the pipeline's output (engine/src/pipeline/engine.cpp):
// per pixel of x [P, 3] (NHWC, storage type), each colour channel becomes
//   round_half_even(clamp(x * unscale / 2 + 0.5, 0, 1) * 255)
// (zero123plus's unscale_image, then diffusers' denormalize and numpy's rounding), alpha 255,
// packed R | G << 8 | B << 16 | A << 24 so the bytes lie R, G, B, A in memory. `precise` keeps
// every operation rounded on its own (no fused multiply-add), so the bytes match fp32 host math.
// Dispatch: wrap_grid (engine/src/kernels/grid.hpp) of ceil(P / 256) workgroups.
#include "common/types.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  uint pixels;
  float unscale;
} pc;

layout(std430, binding = 0) readonly buffer X { STORE_T x[]; };
layout(std430, binding = 1) writeonly buffer Rgba { uint rgba[]; };

uint channel(uint i) {
  precise float y = LOAD(x[i]) * pc.unscale;
  precise float v = clamp(y / 2.0 + 0.5, 0.0, 1.0) * 255.0;
  return uint(roundEven(v));
}

void main() {
  uint p = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
  if (p >= pc.pixels) return;
  rgba[p] = channel(3u * p) | (channel(3u * p + 1u) << 8) | (channel(3u * p + 2u) << 16) | (255u << 24);
}
