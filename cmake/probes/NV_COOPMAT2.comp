#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer B { float16_t data[]; };
void main() {
  tensorLayoutNV<2> t = createTensorLayoutNV(2);
  t = setTensorLayoutDimensionNV(t, 16, 16);
  coopmat<float16_t, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseA> m;
  coopMatLoadTensorNV(m, data, 0, sliceTensorLayoutNV(t, 0, 16, 0, 16));
}
