#version 450
// y[i] = a * x[i] + y[i]: a read-modify-write kernel for the runtime tests (barrier tracking).
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Push { uint count; float a; } pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.count) y[i] = pc.a * x[i] + y[i];
}
