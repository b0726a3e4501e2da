#include "reference_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace z123::test {

namespace {

// Element d of head h for token j of batch b in the joined sequence [a; a2].
double element(const RefAttnOperand& a, const RefAttnOperand& a2, int64_t b, int64_t j, int64_t col) {
  const RefAttnOperand& src = j < a.n ? a : a2;
  int64_t row = b * src.n + (j < a.n ? j : j - a.n);
  return (*src.data)[static_cast<size_t>(row * src.row_stride + src.col_offset + col)];
}

} // namespace

std::vector<double> reference_attention(int64_t batch, int64_t heads, int64_t head_dim, double scale, bool causal,
                                        const RefAttnOperand& q, const RefAttnOperand& k, const RefAttnOperand& v,
                                        const RefAttnOperand& k2, const RefAttnOperand& v2) {
  const int64_t nq = q.n, nkt = k.n + (k2.data ? k2.n : 0), hd = heads * head_dim;
  std::vector<double> out(static_cast<size_t>(batch * nq * hd));
  std::vector<double> s(static_cast<size_t>(nkt));
  const RefAttnOperand none{};
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < nq; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < nkt; ++j) {
          if (causal && j > i) {
            s[j] = -std::numeric_limits<double>::infinity();
            continue;
          }
          double dot = 0;
          for (int64_t d = 0; d < head_dim; ++d)
            dot += element(q, none, b, i, h * head_dim + d) * element(k, k2, b, j, h * head_dim + d);
          s[j] = dot * scale;
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < nkt; ++j) {
          s[j] = std::exp(s[j] - mx); // exp(-inf) = 0 for masked keys
          sum += s[j];
        }
        for (int64_t d = 0; d < head_dim; ++d) {
          double o = 0;
          for (int64_t j = 0; j < nkt; ++j)
            if (s[j] != 0) o += s[j] * element(v, v2, b, j, h * head_dim + d);
          out[static_cast<size_t>((b * nq + i) * hd + h * head_dim + d)] = o / sum;
        }
      }
  return out;
}

} // namespace z123::test
