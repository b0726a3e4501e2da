#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer B { float16_t data[]; };
void main() {
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> m;
  coopMatLoadNV(m, data, 0, 16, false);
  coopMatStoreNV(m, data, 0, 16, false);
}
