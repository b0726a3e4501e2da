#version 450
// Winograd F(2x2, 3x3) transforms around a grouped GEMM (kernels/winograd.hpp): a 3x3 conv with
// stride 1 and padding 1 computes each 2 x 2 block of outputs (a tile) from the 4 x 4 input
// patch around it as 16 elementwise products, which summed over the input channels are 16 GEMMs
// of tiles x Cin by Cin x Cout: 2.25 times fewer multiplies than the 9 taps of the direct conv.
//   input:  V[xi][t][c] = (Bᵀ d B)[a][b],  xi = 4 a + b,  d the 4 x 4 patch of tile t
//   GEMM:   M[xi][t][o] = sum_c V[xi][t][c] U[o][xi][c]  (U = G g Gᵀ, conv_weight_to_winograd)
//   output: y[2 ty + p][2 tx + q][o] = (Aᵀ M A)[p][q] + bias[o] + residual
// with Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1] and Aᵀ = [1 1 1 0; 0 1 -1 -1]. The patch of
// tile (ty, tx) starts at row 2 ty - 1 and column 2 tx - 1 of the (upsampled) input: the padding.
// V and M hold `rows` (>= tiles, a multiple of the GEMM's row tiles) rows per xi; the input
// transform writes zeros past the last tile, the output transform never reads them.
// One invocation moves WINO_VEC (4 or 2) channels of one tile (vector loads along C, coalesced
// across the workgroup); the transforms are adds and subtracts in fp32, rounded once to the
// storage type. Two channels halve an invocation's registers (the input transform holds its 16
// patch values at once: 80 registers with four channels, 24 warps an SM on an H200), for twice the
// invocations (Tuning::winograd_input_vec, winograd_output_vec). On an H200 that made the input
// transform slower (36.4 -> 39.2 us at level 0, at 46 registers) and the output one 3% faster,
// the step unchanged, so four stays the default (bench/NOTES.md session 32).
// The input transform may apply the group norm (and SiLU) before the conv as it reads x: its
// statistics come as a per-channel table (kernels::group_norm_table), so the norm's output never
// goes through memory.
// Defines: WINO_INPUT or WINO_OUTPUT, DTYPE_F16, WINO_VEC (channels per invocation, 4 if unset).
#extension GL_EXT_control_flow_attributes : require
#include "common/types.glsl"

#ifndef WINO_VEC
#define WINO_VEC 4
#endif
#if WINO_VEC == 4
#define VT vec4
#define STORE_VT STORE_T4
#elif WINO_VEC == 2
#define VT vec2
#define STORE_VT STORE_T2
#else
#error "WINO_VEC must be 4 or 2"
#endif

layout(local_size_x = 256) in;

// The invocation's index in the whole grid (kernels::wrap_grid spreads large counts over x and y).
uint invocation() {
  return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
}

#ifdef WINO_INPUT
layout(std430, binding = 0) readonly buffer X { STORE_VT x[]; }; // [B, H, W, C]
layout(std430, binding = 1) writeonly buffer V { STORE_VT v[]; }; // [16, rows, C]
// The group norm before the conv, applied as x is read (kernels::group_norm_table): fp32
// [B, 2, C], y = x * table[b][0][c] + table[b][1][c]. Read only where pc.norm != 0.
layout(std430, binding = 2) readonly buffer Norm { VT tab[]; };
layout(push_constant) uniform Push {
  uint B, H, W;  // x as stored
  uint CV;       // channels / WINO_VEC
  uint up;       // nearest upsampling fused into the read (Upsample2D's conv): 1 or 2
  uint th, tw;   // tiles down and across the (upsampled) image
  uint rows;     // rows per xi in V
  uint norm;     // 0: x as it is; 1: the norm's table applied; 2: and SiLU after it
} pc;

void main() {
  const uint i = invocation();
  if (i >= pc.rows * pc.CV) return;
  const uint t = i / pc.CV, cv = i - t * pc.CV;
  const uint tiles = pc.B * pc.th * pc.tw;
  VT d[4][4];
  [[unroll]] for (int iy = 0; iy < 4; ++iy)
    [[unroll]] for (int ix = 0; ix < 4; ++ix) d[iy][ix] = VT(0.0);
  if (t < tiles) {
    const uint b = t / (pc.th * pc.tw), r = t - b * (pc.th * pc.tw);
    const uint ty = r / pc.tw, tx = r - ty * pc.tw;
    // The patch's rows and columns in x: a shift for the upsampling (no division per element).
    const uint s = pc.up == 2u ? 1u : 0u;
    const int hu = int(pc.H << s), wu = int(pc.W << s);
    uint row[4], col[4];
    bool row_in[4], col_in[4];
    [[unroll]] for (int k = 0; k < 4; ++k) {
      const int yy = int(2u * ty) - 1 + k, xx = int(2u * tx) - 1 + k;
      row_in[k] = yy >= 0 && yy < hu;
      col_in[k] = xx >= 0 && xx < wu;
      row[k] = (b * pc.H + (uint(max(yy, 0)) >> s)) * pc.W;
      col[k] = uint(max(xx, 0)) >> s;
    }
    VT scale = VT(1.0), shift = VT(0.0);
    if (pc.norm != 0u) {
      scale = tab[(2u * b) * pc.CV + cv];
      shift = tab[(2u * b + 1u) * pc.CV + cv];
    }
    // Padding stays zero: the norm applies to x's values only, as it did to the norm's output.
    [[unroll]] for (int iy = 0; iy < 4; ++iy)
      [[unroll]] for (int ix = 0; ix < 4; ++ix)
        if (row_in[iy] && col_in[ix]) {
          VT val = VT(x[(row[iy] + col[ix]) * pc.CV + cv]);
          if (pc.norm != 0u) {
            val = val * scale + shift;
            if (pc.norm == 2u) val = val / (1.0 + exp(-val));
          }
          d[iy][ix] = val;
        }
  }
  // Bᵀ d: along the patch's rows, for each column.
  VT e[4][4];
  [[unroll]] for (int ix = 0; ix < 4; ++ix) {
    e[0][ix] = d[0][ix] - d[2][ix];
    e[1][ix] = d[1][ix] + d[2][ix];
    e[2][ix] = d[2][ix] - d[1][ix];
    e[3][ix] = d[1][ix] - d[3][ix];
  }
  // (Bᵀ d) B: along the columns.
  const uint plane = pc.rows * pc.CV; // one xi
  const uint at = t * pc.CV + cv;
  [[unroll]] for (uint a = 0; a < 4u; ++a) {
    v[(4u * a + 0u) * plane + at] = STORE_VT(e[a][0] - e[a][2]);
    v[(4u * a + 1u) * plane + at] = STORE_VT(e[a][1] + e[a][2]);
    v[(4u * a + 2u) * plane + at] = STORE_VT(e[a][2] - e[a][1]);
    v[(4u * a + 3u) * plane + at] = STORE_VT(e[a][1] - e[a][3]);
  }
}
#endif

#ifdef WINO_OUTPUT
layout(std430, binding = 0) readonly buffer M { STORE_VT m[]; };        // [16, rows, N]
layout(std430, binding = 1) readonly buffer Bias { STORE_VT bias[]; };  // [N]
layout(std430, binding = 2) readonly buffer Res { STORE_VT residual[]; }; // y's shape
layout(std430, binding = 3) writeonly buffer Y { STORE_VT y[]; };      // [B, Ho, Wo, N]
layout(push_constant) uniform Push {
  uint B, Ho, Wo;
  uint NV;     // output channels / WINO_VEC
  uint th, tw; // tiles down and across
  uint rows;   // rows per xi in M
  uint flags;  // 1: bias, 2: residual
} pc;

void main() {
  const uint i = invocation();
  const uint tiles = pc.B * pc.th * pc.tw;
  if (i >= tiles * pc.NV) return;
  const uint t = i / pc.NV, nv = i - t * pc.NV;
  const uint plane = pc.rows * pc.NV, at = t * pc.NV + nv;
  // Aᵀ M: along xi's first index, for each second index.
  VT s[2][4];
  [[unroll]] for (uint b = 0; b < 4u; ++b) {
    VT m0 = VT(m[b * plane + at]), m1 = VT(m[(4u + b) * plane + at]);
    VT m2 = VT(m[(8u + b) * plane + at]), m3 = VT(m[(12u + b) * plane + at]);
    s[0][b] = m0 + m1 + m2;
    s[1][b] = m1 - m2 - m3;
  }
  const uint bi = t / (pc.th * pc.tw), r = t - bi * pc.th * pc.tw;
  const uint ty = r / pc.tw, tx = r - ty * pc.tw;
  const VT add = (pc.flags & 1u) != 0u ? VT(bias[nv]) : VT(0.0);
  [[unroll]] for (uint p = 0; p < 2u; ++p) {
    const uint oy = 2u * ty + p;
    if (oy >= pc.Ho) continue;
    // (Aᵀ M) A: along the second index.
    VT out2[2];
    out2[0] = s[p][0] + s[p][1] + s[p][2];
    out2[1] = s[p][1] - s[p][2] - s[p][3];
    [[unroll]] for (uint q = 0; q < 2u; ++q) {
      const uint ox = 2u * tx + q;
      if (ox >= pc.Wo) continue;
      const uint o = ((bi * pc.Ho + oy) * pc.Wo + ox) * pc.NV + nv;
      VT val = out2[q] + add;
      if ((pc.flags & 2u) != 0u) val += VT(residual[o]);
      y[o] = STORE_VT(val);
    }
  }
}
#endif
