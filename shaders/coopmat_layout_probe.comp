#version 450
// Which row of a KHR fp32 accumulator fragment (CM_M x CM_N, common/coopmat.glsl) each
// invocation's element i holds: implementation-defined, so the host asks the device once
// (kernels::Kernels::khr_accumulator_rows_in_quads) before it picks an attention variant that
// assumes NVIDIA's tensor-core layout (rows lane / 4 and lane / 4 + 8) with no run-time check.
// One subgroup of SUBGROUP_SIZE; output per invocation: the element count, then each element's row.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#include "common/coopmat.glsl"
#ifndef SUBGROUP_SIZE
#define SUBGROUP_SIZE 32
#endif
#define PER_LANE (CM_M * CM_N / SUBGROUP_SIZE + 1)
layout(local_size_x = SUBGROUP_SIZE) in;
layout(std430, binding = 0) writeonly buffer Rows { uint rows[]; }; // [SUBGROUP_SIZE][PER_LANE]

shared uvec4 index_matrix[CM_M * CM_N / 4]; // entry (r, c) = CM_N r + c, row-major

void main() {
  const uint lane = gl_SubgroupInvocationID;
  for (uint u = lane; u < CM_M * CM_N / 4; u += SUBGROUP_SIZE)
    index_matrix[u] = floatBitsToUint(vec4(u * 4) + vec4(0, 1, 2, 3));
  barrier();
  CM_F32ACC m;
  cmLoad(m, index_matrix, 0, CM_N / 4, CM_ROW_MAJOR);
  // A layout with more than CM_M * CM_N / SUBGROUP_SIZE elements per invocation is reported by its
  // count alone (the host then rejects it).
  rows[lane * PER_LANE] = uint(m.length());
  if (m.length() < PER_LANE)
    for (int i = 0; i < m.length(); ++i) rows[lane * PER_LANE + 1 + uint(i)] = uint(m[i]) / CM_N;
}
