#version 450
// GEMM on NV cooperative matrix 2 (GL_NV_cooperative_matrix2: workgroup-scope matrices, tensor
// layouts), fp16 storage, fp32 accumulation. Bindings, push constants, conv geometry and the
// epilogue are those of every GEMM kernel (common/gemm_io.glsl); gemm_dispatch.cpp picks this
// kernel for Path::NvCoopMat2.
//
// Why a third GEMM source: with workgroup-scope matrices the driver, not the shader, splits the
// BM x BN tile over the subgroups, stages operands through shared memory and pipelines the
// global loads (the part our NV v1 kernel does by hand and where it loses most: 0.31x of cuBLAS
// at 19200 x 320 x 1280 on an H200). ggml's coopmat2 matmul, built the same way, reaches
// 117-206 TFLOP/s there.
//
// Operands:
//   A = x [M, K] (linear): coopMatLoadTensorNV straight from global memory; the tensor layout's
//       Constant clamp returns zeros past M and K, so any M, K works without padding.
//   A = implicit im2col of NHWC x (CONV): gathered by the threads into shared memory (16-byte
//       loads when Cin % 8 == 0, VEC8; element gathers otherwise), one BM x BK tile per K step,
//       the next tile's global loads in flight during the matrix product. A tensor-layout load
//       cannot express it in general (strides, asymmetric padding, fused nearest upsampling all
//       couple the row and K coordinates), and a per-element decode function would spend ~4
//       integer divisions per element, an order of magnitude more ALU time than the tensor
//       cores need for the tile.
//   B = W^T: W [N, K] (for CONV [Cout, kh, kw, Cin], the same matrix) loaded through a
//       transposing tensor view, clamped like A.
// Epilogue: bias and GELU / SiLU per element (coopMatPerElementNV, which passes each element's
// column, so gemm_bias_act() of gemm_io.glsl is reused as is), the residual as a clamped tensor
// load added in fp32, conversion to fp16, clamped tensor store (rows past M and columns past N
// are dropped).
//
// Defines: DTYPE_F16 (required), CONV; BM, BN, BK, NT (invocations) tune the tiling.
// Spec constant 0 VEC8 (CONV only): Cin % 8 == 0, so 8 consecutive K elements are one 16-byte
// load from one tap.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require

#ifndef DTYPE_F16
#error "the cooperative-matrix GEMM is fp16 only"
#endif
#include "common/gemm_io.glsl"

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 64
#endif
#ifndef NT
#define NT 256
#endif

layout(local_size_x = NT) in;
layout(constant_id = 0) const bool VEC8 = false;

#define CLAMP gl_CooperativeMatrixClampModeConstantNV
#define ACC_MAT coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
#define OUT_MAT coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
#define A_MAT coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA>
#define B_MAT coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB>

uint tile_m0, tile_n0;

// Bias and activation of one element at tile column c. Columns of the padding (past N) are
// never stored; returning them unchanged keeps the bias read in bounds.
float bias_act_elem(const in uint r, const in uint c, const in float v, const in uint n0) {
  uint n = n0 + c;
  return n < pc.N ? gemm_bias_act(v, n) : v;
}

#ifdef CONV
// ---- implicit im2col through shared memory ----
layout(std430, binding = 0) readonly buffer XBuf8 { uvec4 x8[]; };

#define CHUNKS_K (BK / 8)                   // 16-byte chunks per tile row
#define ROWS_PER_PASS (NT / CHUNKS_K)       // tile rows one pass of the workgroup gathers
#define A_PASSES (BM / ROWS_PER_PASS)
#if (BM % ROWS_PER_PASS) != 0 || (BK % 8) != 0
#error "the workgroup must gather the A tile in whole passes of 16-byte chunks"
#endif
// Rows padded by one 16-byte unit so that the rows a fragment load touches start in distinct
// banks.
#define LDA (CHUNKS_K + 1)
shared uvec4 sa[BM * LDA];

uvec4 ra[A_PASSES];
ConvRow arow[A_PASSES];
bool arow_ok[A_PASSES];

uint pack2(float a, float b) { return packFloat2x16(f16vec2(a, b)); }

// Where K position k lies in the conv weight: tap (ky, kx) and input channel ci.
struct TapPos {
  uint ky, kx, ci;
};
TapPos tap_pos(uint k) {
  uint tap = k / pc.Cin;
  TapPos t;
  t.ci = k - tap * pc.Cin;
  t.ky = tap / pc.KW;
  t.kx = tap - t.ky * pc.KW;
  return t;
}

// This invocation's 8 consecutive K elements (from k) of its tile row of pass p, zero outside.
uvec4 gather_a(uint p, uint k, TapPos t) {
  if (!arow_ok[p] || k >= pc.K) return uvec4(0);
  if (VEC8) { // 8 channels of one tap: one 16-byte load (t is tap_pos(k))
    int o = conv_tap_offset(arow[p], t.ky, t.kx);
    return o < 0 ? uvec4(0) : x8[(uint(o) + t.ci) >> 3];
  }
  float v[8]; // Cin % 8 != 0 (RGB, 4-channel latents, Cin 12): the 8 elements may span taps
  [[unroll]] for (uint e = 0; e < 8; ++e) {
    v[e] = 0.0;
    if (k + e < pc.K) {
      TapPos te = tap_pos(k + e);
      int o = conv_tap_offset(arow[p], te.ky, te.kx);
      if (o >= 0) v[e] = LOAD(x[uint(o) + te.ci]);
    }
  }
  return uvec4(pack2(v[0], v[1]), pack2(v[2], v[3]), pack2(v[4], v[5]), pack2(v[6], v[7]));
}

void gather_tile(uint k0) {
  uint k = k0 + (gl_LocalInvocationIndex % CHUNKS_K) * 8;
  TapPos t;
  if (VEC8) t = tap_pos(k); // one tap per chunk: computed once for all rows
  [[unroll]] for (uint p = 0; p < A_PASSES; ++p) ra[p] = gather_a(p, k, t);
}

void store_tile() {
  uint chunk = gl_LocalInvocationIndex % CHUNKS_K, row = gl_LocalInvocationIndex / CHUNKS_K;
  [[unroll]] for (uint p = 0; p < A_PASSES; ++p) sa[(row + p * ROWS_PER_PASS) * LDA + chunk] = ra[p];
}
#endif

void main() {
  tile_m0 = gemm_m_tile() * BM;
  tile_n0 = gl_WorkGroupID.x * BN;
  if (tile_m0 >= pc.M) return; // idle tail groups of the y/z split leave together

  // B = W^T: W is [N, K] row-major; the view swaps the two coordinates.
  tensorLayoutNV<2, CLAMP> lw = createTensorLayoutNV(2, CLAMP);
  lw = setTensorLayoutDimensionNV(lw, pc.N, pc.K);
  tensorViewNV<2, false, 1, 0> transpose = createTensorViewNV(2, false, 1, 0);

  ACC_MAT acc = ACC_MAT(0.0);

#ifdef CONV
  {
    uint row = gl_LocalInvocationIndex / CHUNKS_K;
    [[unroll]] for (uint p = 0; p < A_PASSES; ++p) {
      uint m = tile_m0 + row + p * ROWS_PER_PASS;
      arow_ok[p] = m < pc.M;
      arow[p] = conv_row(min(m, pc.M - 1));
    }
  }
  gather_tile(0);
  for (uint k0 = 0; k0 < pc.K; k0 += BK) {
    store_tile();
    barrier();
    A_MAT a;
    coopMatLoad(a, sa, 0, LDA, gl_CooperativeMatrixLayoutRowMajor);
    if (k0 + BK < pc.K) gather_tile(k0 + BK); // in flight during the product below
    B_MAT b;
    coopMatLoadTensorNV(b, w, 0, sliceTensorLayoutNV(lw, tile_n0, BN, k0, BK), transpose);
    acc = coopMatMulAdd(a, b, acc);
    barrier(); // every subgroup has read the tile before the next step overwrites it
  }
#else
  tensorLayoutNV<2, CLAMP> lx = createTensorLayoutNV(2, CLAMP);
  lx = setTensorLayoutDimensionNV(lx, pc.M, pc.K);
  // Unrolled by two: the loads of one step can be issued while the previous product runs.
  uint k0 = 0;
  for (; k0 + 2 * BK <= pc.K; k0 += 2 * BK) {
    A_MAT a0, a1;
    B_MAT b0, b1;
    coopMatLoadTensorNV(a0, x, 0, sliceTensorLayoutNV(lx, tile_m0, BM, k0, BK));
    coopMatLoadTensorNV(b0, w, 0, sliceTensorLayoutNV(lw, tile_n0, BN, k0, BK), transpose);
    coopMatLoadTensorNV(a1, x, 0, sliceTensorLayoutNV(lx, tile_m0, BM, k0 + BK, BK));
    coopMatLoadTensorNV(b1, w, 0, sliceTensorLayoutNV(lw, tile_n0, BN, k0 + BK, BK), transpose);
    acc = coopMatMulAdd(a0, b0, acc);
    acc = coopMatMulAdd(a1, b1, acc);
  }
  // What the pairs leave of K (under 2 * BK): up to two steps, the last possibly partial
  // (clamped to zeros past K in both A and B).
  for (; k0 < pc.K; k0 += BK) {
    A_MAT a;
    B_MAT b;
    coopMatLoadTensorNV(a, x, 0, sliceTensorLayoutNV(lx, tile_m0, BM, k0, BK));
    coopMatLoadTensorNV(b, w, 0, sliceTensorLayoutNV(lw, tile_n0, BN, k0, BK), transpose);
    acc = coopMatMulAdd(a, b, acc);
  }
#endif

  // The residual [M, N] has y's layout: one clamped tensor load (zeros in the padding) instead
  // of a scalar read per element.
  tensorLayoutNV<2, CLAMP> ly = createTensorLayoutNV(2, CLAMP);
  ly = setTensorLayoutDimensionNV(ly, pc.M, pc.N);
  if ((pc.flags & ~GEMM_HAS_RESIDUAL) != 0u) coopMatPerElementNV(acc, acc, bias_act_elem, tile_n0);
  if ((pc.flags & GEMM_HAS_RESIDUAL) != 0u) {
    OUT_MAT r;
    coopMatLoadTensorNV(r, residual, 0, sliceTensorLayoutNV(ly, tile_m0, BM, tile_n0, BN));
    acc += ACC_MAT(r);
  }
  OUT_MAT o = OUT_MAT(acc);
  coopMatStoreTensorNV(o, y, 0, sliceTensorLayoutNV(ly, tile_m0, BM, tile_n0, BN));
}
