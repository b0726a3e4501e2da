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
