#version 450
// Data movement with an optional dtype conversion. Defines: IN_F16 / OUT_F16 pick the element
// types of x and y (values pass through fp32, exact for fp16 -> fp32, round-to-nearest for
// fp32 -> fp16); VEC = 4 moves 4 channels per access (needs the channel counts and the offset
// to be multiples of 4; the transposes are always scalar).
//
// Every op walks a flat index space of rows x CV channel vectors: invocation t of workgroup w
// starts at f = (w * ELEMS) * W + t and takes ELEMS steps of W (the workgroup size), so every
// step of the workgroup is one coalesced run. Row / channel (and, for the upsample, pixel
// x / image row) advance incrementally with carries: no per-element integer division on the hot
// ops.
//   OP_COPY_ROWS  x [rows, CV] -> y[row * dst_stride + dst_offset + cv]  (cast, copy_channels)
//   OP_UPSAMPLE2X x [B * H, W, CV] -> y [B * 2H, 2W, CV]; each value lands in a 2 x 2 block
//   OP_NCHW2NHWC  row = (b, p) destination pixel: y[row * C + c] = x[(b * C + c) * HW + p]
//   OP_NHWC2NCHW  row = (b, p) source pixel:      y[(b * C + c) * HW + p] = x[row * C + c]
// Workgroup counts above 65535 wrap into gl_WorkGroupID.y.
#if defined(IN_F16) || defined(OUT_F16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#ifndef VEC
#define VEC 1
#endif
#if VEC == 4
#define VT vec4
#ifdef IN_F16
#define IN_T f16vec4
#else
#define IN_T vec4
#endif
#ifdef OUT_F16
#define OUT_T f16vec4
#else
#define OUT_T vec4
#endif
#else
#define VT float
#ifdef IN_F16
#define IN_T float16_t
#else
#define IN_T float
#endif
#ifdef OUT_F16
#define OUT_T float16_t
#else
#define OUT_T float
#endif
#endif

#define OP_COPY_ROWS 0u
#define OP_UPSAMPLE2X 1u
#define OP_NCHW2NHWC 2u
#define OP_NHWC2NCHW 3u

#define ELEMS 4u

layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer X { IN_T x[]; };
layout(std430, binding = 1) writeonly buffer Y { OUT_T y[]; };

layout(push_constant) uniform Push {
  uint op;
  uint CV;         // channel vectors per row of the iteration space
  uint rows;       // rows of the iteration space (source pixels for the upsample)
  uint dst_stride; // OP_COPY_ROWS: destination row length, in vectors
  uint dst_offset; // OP_COPY_ROWS: first destination vector of each row
  uint HW;         // transposes: pixels per image
  uint W;          // OP_UPSAMPLE2X: source width
} pc;

void put(uint i, VT v) { y[i] = OUT_T(v); }
VT get(uint i) { return VT(x[i]); }

void main() {
  uint W = gl_WorkGroupSize.x;
  uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  uint f = wg * ELEMS * W + gl_LocalInvocationID.x;
  uint row = f / pc.CV, c = f - row * pc.CV;
  uint dc = W % pc.CV, drow = W / pc.CV;

  if (pc.op == OP_COPY_ROWS) {
    for (uint e = 0; e < ELEMS && row < pc.rows; ++e) {
      put(row * pc.dst_stride + pc.dst_offset + c, get(row * pc.CV + c));
      c += dc;
      row += drow;
      if (c >= pc.CV) {
        c -= pc.CV;
        row += 1u;
      }
    }
  } else if (pc.op == OP_UPSAMPLE2X) {
    // row = q * W + ix with q = b * H + iy; destination rows 2q and 2q + 1, columns 2ix, 2ix + 1.
    uint q = row / pc.W, ix = row - q * pc.W;
    uint dq = drow / pc.W, dix = drow - dq * pc.W;
    uint line = 2u * pc.W * pc.CV; // one destination image row, in vectors
    for (uint e = 0; e < ELEMS && q * pc.W + ix < pc.rows; ++e) {
      VT v = get((q * pc.W + ix) * pc.CV + c);
      uint top = 2u * q * line + 2u * ix * pc.CV + c;
      put(top, v);
      put(top + pc.CV, v);
      put(top + line, v);
      put(top + line + pc.CV, v);
      c += dc;
      ix += dix;
      q += dq;
      if (c >= pc.CV) {
        c -= pc.CV;
        ix += 1u;
      }
      if (ix >= pc.W) {
        ix -= pc.W;
        q += 1u;
      }
    }
  } else {
    // Boundary transposes (images and latents, small): scalar, one division per element.
    for (uint e = 0; e < ELEMS && row < pc.rows; ++e) {
      uint b = row / pc.HW, p = row - b * pc.HW;
      uint planar = (b * pc.CV + c) * pc.HW + p;
      if (pc.op == OP_NCHW2NHWC)
        put(row * pc.CV + c, get(planar));
      else
        put(planar, get(row * pc.CV + c));
      c += dc;
      row += drow;
      if (c >= pc.CV) {
        c -= pc.CV;
        row += 1u;
      }
    }
  }
}
