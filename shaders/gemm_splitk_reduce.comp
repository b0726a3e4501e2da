#version 450
// Second half of a split-K GEMM (gemm_coopmat.comp or gemm.comp with pc.k_chunk != 0): sums the fp32
// partial sums [splits, M, N] that the GEMM wrote to binding 0 and applies the usual epilogue
// (bias, activation, residual) into y. One invocation per output element. Same bindings and
// push block as the GEMM kernels (common/gemm_io.glsl), so the epilogue code is shared.
#extension GL_EXT_control_flow_attributes : require

#include "common/gemm_io.glsl"

layout(local_size_x = 256) in;
// Binding 0 holds the GEMM's partial sums here (x in the GEMM itself).
layout(std430, binding = 0) readonly buffer PartialBuf { float partial[]; };

void main() {
  uint idx = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (idx >= pc.M * pc.N) return;
  uint splits = (pc.K + pc.k_chunk - 1u) / pc.k_chunk;
  uint plane = pc.M * pc.N;
  float v = 0.0;
  for (uint s = 0u; s < splits; ++s) v += partial[s * plane + idx];
  y[idx] = STORE(gemm_epilogue(v, idx / pc.N, idx % pc.N));
}
