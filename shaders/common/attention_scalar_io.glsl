// What the two portable attention kernels (attention_portable.glsl, attention_tiled.glsl) share:
// the operands as arrays of the storage type (bindings 0-5 of attention.comp), the masking
// constants of their online softmax, and a 4-element read that converts to fp32.
#ifndef Z123_ATTENTION_SCALAR_IO_GLSL
#define Z123_ATTENTION_SCALAR_IO_GLSL

layout(std430, binding = 0) readonly buffer QBuf { STORE_T q_buf[]; };
layout(std430, binding = 1) readonly buffer KBuf { STORE_T k_buf[]; };
layout(std430, binding = 2) readonly buffer VBuf { STORE_T v_buf[]; };
layout(std430, binding = 3) readonly buffer K2Buf { STORE_T k2_buf[]; };
layout(std430, binding = 4) readonly buffer V2Buf { STORE_T v2_buf[]; };
layout(std430, binding = 5) writeonly buffer OBuf { STORE_T o_buf[]; };

// Masked scores: far below any real score, so exp2(masked - max) is exactly 0 without a branch,
// yet finite, so the running max never meets inf - inf.
const float MASKED = -3.0e38;
const float M_INIT = -1.0e30;

// Elements base .. base+3 of buf, one load each (any alignment).
#define LOAD4S(buf, base) vec4(float(buf[(base)]), float(buf[(base) + 1]), float(buf[(base) + 2]), float(buf[(base) + 3]))

#endif
