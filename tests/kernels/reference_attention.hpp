// Float64 reference for kernels::attention(): the textbook softmax(Q Kᵀ · scale [+ mask]) V per
// (batch, head), materializing the scores, computed from the values the device holds.
#pragma once

#include <cstdint>
#include <vector>

namespace z123::test {

// Host data of one operand: rows of n tokens per batch, row_stride elements apart, the head-0
// window starting at col_offset (same meaning as kernels::AttnOperand).
struct RefAttnOperand {
  const std::vector<float>* data = nullptr; // nullptr: absent (second K/V source only)
  int64_t n = 0;                            // tokens per batch
  int64_t row_stride = 0;
  int64_t col_offset = 0;
};

// Returns out [batch, q.n, heads*head_dim] in float64. Keys/values are [k; k2] and [v; v2];
// causal masks key j > query i.
std::vector<double> reference_attention(int64_t batch, int64_t heads, int64_t head_dim, double scale, bool causal,
                                        const RefAttnOperand& q, const RefAttnOperand& k, const RefAttnOperand& v,
                                        const RefAttnOperand& k2 = {}, const RefAttnOperand& v2 = {});

} // namespace z123::test
