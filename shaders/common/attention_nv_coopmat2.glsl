// NV cooperative matrix 2 attention path (GL_NV_cooperative_matrix2; included by attention.comp
// with ATTN_NV_COOPMAT2). fp16 storage and matrix inputs, fp32 scores, softmax and output
// accumulator; same semantics as the other paths (joined key sequence [K; K2], scale given as
// scale * log2(e), no score matrix in memory). Not causal: attention.cpp sends causal problems
// (CLIP text only) to the other paths.
//
// One workgroup computes BR query rows of one (head, batch) with workgroup-scope matrices: the
// driver distributes them over the subgroups, stages tensor loads through shared memory and
// implements row reductions, so the per-row bookkeeping our NV v1 kernel does by hand (learning
// the fragment layout, shuffles or shared-memory round trips, 16-row subgroup tiles whose
// fragment loads bound it at ~150 TFLOP/s on an H200) is gone. Per key tile of BC keys:
//   S = Q·Kᵀ · c                    (c = scale · log2 e; Kᵀ through a transposing tensor view)
//   m' = max(m, rowmax(S))          coopMatReduceNV, smeared over each row
//   P = exp2(S - m'), α = exp2(m - m')
//   l = α l + rowsum(P),  O = α O + P·V
// The running max m, sum l and α are BR x BC matrices holding their row's value in every
// column: elementwise operations between matrices of one type pair elements of the same
// (row, column), whatever the implementation's layout. With BC == D, O has that type too.
// Key tiles never straddle the two sources: each source is tiled on its own, and the tensor
// layouts' Constant clamp loads zeros past its end, whose scores are masked to -inf.
//
// Requirements (attention.cpp): D a multiple of 16 (variants: 64), row strides and column
// offsets multiples of 8 elements (tensor loads need 16-byte aligned bases).
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require

#ifndef DTYPE_F16
#error "the cooperative-matrix attention is fp16 only"
#endif

#ifndef ATTN_BR
#define ATTN_BR 64 // query rows per workgroup (attention.cpp: queries per group of the variant)
#endif
#ifndef ATTN_BC
#define ATTN_BC 64 // keys per tile
#endif
#ifndef ATTN_NT
#define ATTN_NT 128 // invocations
#endif
#define BR ATTN_BR
#define BC ATTN_BC

layout(local_size_x = ATTN_NT) in;

layout(std430, binding = 0) readonly buffer QBuf { float16_t qb[]; };
layout(std430, binding = 1) readonly buffer KBuf { float16_t kb[]; };
layout(std430, binding = 2) readonly buffer VBuf { float16_t vb[]; };
layout(std430, binding = 3) readonly buffer K2Buf { float16_t k2b[]; };
layout(std430, binding = 4) readonly buffer V2Buf { float16_t v2b[]; };
layout(std430, binding = 5) writeonly buffer OBuf { float16_t ob[]; };

#define CLAMP gl_CooperativeMatrixClampModeConstantNV
#define S_MAT coopmat<float, gl_ScopeWorkgroup, BR, BC, gl_MatrixUseAccumulator>
#define O_MAT coopmat<float, gl_ScopeWorkgroup, BR, D, gl_MatrixUseAccumulator>
#define OH_MAT coopmat<float16_t, gl_ScopeWorkgroup, BR, D, gl_MatrixUseAccumulator>
#define Q_MAT coopmat<float16_t, gl_ScopeWorkgroup, BR, D, gl_MatrixUseA>
#define KT_MAT coopmat<float16_t, gl_ScopeWorkgroup, D, BC, gl_MatrixUseB>
#define P_MAT coopmat<float16_t, gl_ScopeWorkgroup, BR, BC, gl_MatrixUseA>
#define V_MAT coopmat<float16_t, gl_ScopeWorkgroup, BC, D, gl_MatrixUseB>

const float NEG_INF = -1.0 / 0.0;
const float M_INIT = -1.0e30; // finite: exp2(M_INIT - m) is 0, never inf - inf

float max_op(const in float a, const in float b) { return max(a, b); }
float add_op(const in float a, const in float b) { return a + b; }
// Row "reduction" that copies a row's (uniform) value into a matrix of another column count.
float smear_op(const in float a, const in float b) { return a; }
// Scores of keys past the end of the current source (the clamped zero rows) drop out.
float mask_keys(const in uint r, const in uint c, const in float v, const in uint valid) {
  return c < valid ? v : NEG_INF;
}

void main() {
  const uint b = gl_WorkGroupID.z, h = gl_WorkGroupID.y;
  const uint q0 = gl_WorkGroupID.x * BR;
  const float c = pc.scale_log2;

  // Each operand: rows of its own stride, this head's D columns at col_offset + h D.
  tensorLayoutNV<2, CLAMP> lq = createTensorLayoutNV(2, CLAMP);
  lq = setTensorLayoutDimensionNV(lq, pc.nq, D);
  lq = setTensorLayoutStrideNV(lq, pc.q_stride, 1);
  tensorLayoutNV<2, CLAMP> lk = createTensorLayoutNV(2, CLAMP);
  lk = setTensorLayoutDimensionNV(lk, pc.nk, D);
  lk = setTensorLayoutStrideNV(lk, pc.k_stride, 1);
  tensorLayoutNV<2, CLAMP> lv = createTensorLayoutNV(2, CLAMP);
  lv = setTensorLayoutDimensionNV(lv, pc.nk, D);
  lv = setTensorLayoutStrideNV(lv, pc.v_stride, 1);
  tensorLayoutNV<2, CLAMP> lk2 = createTensorLayoutNV(2, CLAMP);
  lk2 = setTensorLayoutDimensionNV(lk2, pc.nk2, D);
  lk2 = setTensorLayoutStrideNV(lk2, pc.k2_stride, 1);
  tensorLayoutNV<2, CLAMP> lv2 = createTensorLayoutNV(2, CLAMP);
  lv2 = setTensorLayoutDimensionNV(lv2, pc.nk2, D);
  lv2 = setTensorLayoutStrideNV(lv2, pc.v2_stride, 1);
  tensorViewNV<2, false, 1, 0> transpose = createTensorViewNV(2, false, 1, 0);

  const uint q_base = b * pc.nq * pc.q_stride + pc.q_off + h * D;
  const uint k_base = b * pc.nk * pc.k_stride + pc.k_off + h * D;
  const uint v_base = b * pc.nk * pc.v_stride + pc.v_off + h * D;
  const uint k2_base = b * pc.nk2 * pc.k2_stride + pc.k2_off + h * D;
  const uint v2_base = b * pc.nk2 * pc.v2_stride + pc.v2_off + h * D;

  Q_MAT qm;
  coopMatLoadTensorNV(qm, qb, q_base, sliceTensorLayoutNV(lq, q0, BR, 0, D));

  O_MAT o = O_MAT(0.0);
  S_MAT m = S_MAT(M_INIT), l = S_MAT(0.0);

  const uint tiles1 = (pc.nk + BC - 1) / BC, tiles = tiles1 + (pc.nk2 + BC - 1) / BC;
  for (uint t = 0; t < tiles; ++t) {
    KT_MAT kt;
    V_MAT vm;
    uint valid; // keys of this tile inside its source
    if (t < tiles1) {
      uint j0 = t * BC;
      valid = min(BC, pc.nk - j0);
      coopMatLoadTensorNV(kt, kb, k_base, sliceTensorLayoutNV(lk, j0, BC, 0, D), transpose);
      coopMatLoadTensorNV(vm, vb, v_base, sliceTensorLayoutNV(lv, j0, BC, 0, D));
    } else {
      uint j0 = (t - tiles1) * BC;
      valid = min(BC, pc.nk2 - j0);
      coopMatLoadTensorNV(kt, k2b, k2_base, sliceTensorLayoutNV(lk2, j0, BC, 0, D), transpose);
      coopMatLoadTensorNV(vm, v2b, v2_base, sliceTensorLayoutNV(lv2, j0, BC, 0, D));
    }

    S_MAT s = coopMatMulAdd(qm, kt, S_MAT(0.0));
    s = s * c; // c > 0: the row max commutes with the scaling
    if (valid < BC) coopMatPerElementNV(s, s, mask_keys, valid);

    S_MAT rmax;
    coopMatReduceNV(rmax, s, gl_CooperativeMatrixReduceRowNV, max_op);
    S_MAT alpha;
    for (int i = 0; i < s.length(); ++i) {
      float mn = max(m[i], rmax[i]); // every row has a valid key: finite
      alpha[i] = exp2(m[i] - mn);
      s[i] = exp2(s[i] - mn);
      m[i] = mn;
    }
    S_MAT rsum;
    coopMatReduceNV(rsum, s, gl_CooperativeMatrixReduceRowNV, add_op);
    for (int i = 0; i < l.length(); ++i) l[i] = fma(l[i], alpha[i], rsum[i]);

#if BC == D
    for (int i = 0; i < o.length(); ++i) o[i] *= alpha[i];
#else
    O_MAT alpha_o;
    coopMatReduceNV(alpha_o, alpha, gl_CooperativeMatrixReduceRowNV, smear_op);
    for (int i = 0; i < o.length(); ++i) o[i] *= alpha_o[i];
#endif
    P_MAT p = P_MAT(s);
    o = coopMatMulAdd(p, vm, o);
  }

  // O / l (l >= 1: the row max contributes exp2(0)). Query rows past nq are dropped by the
  // clamped store.
#if BC == D
  for (int i = 0; i < o.length(); ++i) o[i] /= l[i];
#else
  O_MAT l_o;
  coopMatReduceNV(l_o, l, gl_CooperativeMatrixReduceRowNV, smear_op);
  for (int i = 0; i < o.length(); ++i) o[i] /= l_o[i];
#endif
  OH_MAT oh = OH_MAT(o);
  tensorLayoutNV<2, CLAMP> lo = createTensorLayoutNV(2, CLAMP);
  lo = setTensorLayoutDimensionNV(lo, pc.nq, D);
  lo = setTensorLayoutStrideNV(lo, pc.heads * D, 1);
  coopMatStoreTensorNV(oh, ob, (b * pc.nq * pc.heads + h) * D, sliceTensorLayoutNV(lo, q0, BR, 0, D));
}
