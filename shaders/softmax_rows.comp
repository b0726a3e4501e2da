#version 450
// Row softmax: y[r, :] = softmax(scale * x[r, :]) for fp32 scores x (the wide-head attention's
// Q·Kᵀ, kernels::softmax_rows), one workgroup per row, fp32 arithmetic, y in the storage type.
// Three passes over the row (max, sum of exponentials, write), each strided over the workgroup;
// the row (tens of KiB) stays in cache between them. Reductions through shared memory, so any
// subgroup size works.
// Defines: DTYPE_F16 (y fp16). Grid: x * y covers the rows (y when rows exceed 65535).
#extension GL_EXT_control_flow_attributes : require
#include "common/types.glsl"

#define NT 256
layout(local_size_x = NT) in;
layout(std430, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, binding = 1) writeonly buffer YBuf { STORE_T y[]; };
layout(push_constant) uniform Push {
  uint rows, n;
  float scale_log2e; // scale * log2(e): exponentials are exp2
  uint rows_per_y;   // rows covered by one grid row (gl_NumWorkGroups.x)
} pc;

shared float red[NT];

float reduce(float v, bool is_max) {
  red[gl_LocalInvocationIndex] = v;
  barrier();
  [[unroll]] for (uint s = NT / 2; s > 0; s >>= 1) {
    if (gl_LocalInvocationIndex < s) {
      float o = red[gl_LocalInvocationIndex + s];
      red[gl_LocalInvocationIndex] = is_max ? max(red[gl_LocalInvocationIndex], o) : red[gl_LocalInvocationIndex] + o;
    }
    barrier();
  }
  float r = red[0];
  barrier(); // red is reused by the next reduction
  return r;
}

void main() {
  uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * pc.rows_per_y;
  if (row >= pc.rows) return; // whole workgroup: barriers stay uniform
  uint base = row * pc.n;
  float m = -1.0 / 0.0;
  for (uint i = gl_LocalInvocationIndex; i < pc.n; i += NT) m = max(m, x[base + i]);
  m = reduce(m, true) * pc.scale_log2e;
  float sum = 0.0;
  for (uint i = gl_LocalInvocationIndex; i < pc.n; i += NT) sum += exp2(x[base + i] * pc.scale_log2e - m);
  float inv = 1.0 / reduce(sum, false);
  for (uint i = gl_LocalInvocationIndex; i < pc.n; i += NT) y[base + i] = STORE(exp2(x[base + i] * pc.scale_log2e - m) * inv);
}
