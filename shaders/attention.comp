#version 450
// Fused multi-head attention, flash style (engine/include/z123/kernels/attention.hpp):
//   out[b, i, h*D + d] = sum_j softmax_j(scale * q_i . k_j [+ causal mask]) v_j[d]
// over the joined key sequence [K; K2] (second source optional, Nk2 = 0 when absent). Scores,
// the running max / sum and the output accumulator are fp32; the score matrix never leaves
// the workgroup. Q/K/V rows may be windows of wider rows (fused QKV projections): every operand
// has its own row stride and column offset, in elements.
//
// Variants (shaders/variants/attention.cmake), all from this one source:
//   HEAD_DIM=D            head size
//   DTYPE_F16             fp16 storage (fp32 otherwise)
//   ATTN_COOPMAT       cooperative-matrix path (fp16 only; tensor cores): GL_NV_cooperative_matrix,
//                         or GL_KHR_cooperative_matrix with COOPMAT_KHR as well
//   ATTN_NV_COOPMAT2      GL_NV_cooperative_matrix2 path (fp16 only, not causal)
//   ATTN_TILED            register-tiled portable path, head sizes up to 64: ATTN_NT invocations,
//                         ATTN_RO query rows and ATTN_KS keys per invocation
//   portable tiling:      ATTN_DSPLIT (invocations per query), ATTN_QB (queries per workgroup),
//                         ATTN_BK (keys per shared-memory tile); the one-query-per-invocation
//                         path, for head sizes the tiled one does not take (80, 512)
//
// Bindings: 0 Q, 1 K, 2 V, 3 K2, 4 V2, 5 out [B, Nq, H*D]. Dispatch: (query blocks, H, B).
#extension GL_EXT_control_flow_attributes : enable

#include "common/types.glsl"

layout(push_constant) uniform Push {
  uint nq, nk, nk2, heads;
  uint q_stride, q_off, k_stride, k_off;
  uint v_stride, v_off, k2_stride, k2_off;
  uint v2_stride, v2_off;
  uint causal;      // 1: key j > query i is masked
  float scale_log2; // scale * log2(e): scores are kept in the log2 domain so exp2 does the softmax
} pc;

// The geometry may be fixed per pipeline: specialization constants 1-15 hold the push block's
// fields up to `causal` in its order, each as value + 1 (0 reads the push block). Known at
// compile time, the tile loops' bounds, the row addresses and the causal masks fold away
// (Tuning::attn_fixed_geometry; mirrors attention_spec in engine/src/kernels/attention.cpp).
// Constant 0 is the tiled variant's VEC4.
layout(constant_id = 1) const uint SPEC_NQ = 0u;
layout(constant_id = 2) const uint SPEC_NK = 0u;
layout(constant_id = 3) const uint SPEC_NK2 = 0u;
layout(constant_id = 4) const uint SPEC_HEADS = 0u;
layout(constant_id = 5) const uint SPEC_Q_STRIDE = 0u;
layout(constant_id = 6) const uint SPEC_Q_OFF = 0u;
layout(constant_id = 7) const uint SPEC_K_STRIDE = 0u;
layout(constant_id = 8) const uint SPEC_K_OFF = 0u;
layout(constant_id = 9) const uint SPEC_V_STRIDE = 0u;
layout(constant_id = 10) const uint SPEC_V_OFF = 0u;
layout(constant_id = 11) const uint SPEC_K2_STRIDE = 0u;
layout(constant_id = 12) const uint SPEC_K2_OFF = 0u;
layout(constant_id = 13) const uint SPEC_V2_STRIDE = 0u;
layout(constant_id = 14) const uint SPEC_V2_OFF = 0u;
layout(constant_id = 15) const uint SPEC_CAUSAL = 0u;
#define ATT_FIELD(c, v) ((c) != 0u ? (c) - 1u : (v))
#define P_NQ ATT_FIELD(SPEC_NQ, pc.nq)
#define P_NK ATT_FIELD(SPEC_NK, pc.nk)
#define P_NK2 ATT_FIELD(SPEC_NK2, pc.nk2)
#define P_HEADS ATT_FIELD(SPEC_HEADS, pc.heads)
#define P_Q_STRIDE ATT_FIELD(SPEC_Q_STRIDE, pc.q_stride)
#define P_Q_OFF ATT_FIELD(SPEC_Q_OFF, pc.q_off)
#define P_K_STRIDE ATT_FIELD(SPEC_K_STRIDE, pc.k_stride)
#define P_K_OFF ATT_FIELD(SPEC_K_OFF, pc.k_off)
#define P_V_STRIDE ATT_FIELD(SPEC_V_STRIDE, pc.v_stride)
#define P_V_OFF ATT_FIELD(SPEC_V_OFF, pc.v_off)
#define P_K2_STRIDE ATT_FIELD(SPEC_K2_STRIDE, pc.k2_stride)
#define P_K2_OFF ATT_FIELD(SPEC_K2_OFF, pc.k2_off)
#define P_V2_STRIDE ATT_FIELD(SPEC_V2_STRIDE, pc.v2_stride)
#define P_V2_OFF ATT_FIELD(SPEC_V2_OFF, pc.v2_off)
#define P_CAUSAL ATT_FIELD(SPEC_CAUSAL, pc.causal)

#define D HEAD_DIM

#if defined(ATTN_NV_COOPMAT2)
#include "common/attention_nv_coopmat2.glsl"
#elif defined(ATTN_COOPMAT)
#include "common/attention_coopmat.glsl"
#elif defined(ATTN_TILED)
#include "common/attention_tiled.glsl"
#else
#include "common/attention_portable.glsl"
#endif
