#version 450
// out[i] = base + i * step for i < count: a kernel whose every output word is predictable, used
// by the runtime tests to check dispatch coverage and buffer offsets.
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) writeonly buffer Out { uint data[]; } dst;
layout(push_constant) uniform Push { uint count; uint base; uint step_; } pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.count) dst.data[i] = pc.base + i * pc.step_;
}
