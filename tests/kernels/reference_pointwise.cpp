#include "reference_pointwise.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>

namespace z123::test::pointwise {

Tensor upload_tensor(vk::Device& device, DType dtype, const std::vector<int64_t>& shape,
                     const std::vector<float>& values, const std::string& name) {
  Tensor t = make_tensor(device, dtype, shape, name);
  upload(device, t, values);
  return t;
}

std::vector<double> to_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

std::vector<double> group_norm(const std::vector<float>& x, const std::vector<float>& gamma,
                               const std::vector<float>& beta, int64_t B, int64_t HW, int64_t C, int64_t groups,
                               double eps, bool silu) {
  std::vector<double> y(x.size());
  const int64_t cpg = C / groups;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      auto at = [&](int64_t r, int64_t j) { return static_cast<size_t>((b * HW + r) * C + g * cpg + j); };
      double sum = 0;
      for (int64_t r = 0; r < HW; ++r)
        for (int64_t j = 0; j < cpg; ++j) sum += x[at(r, j)];
      const double n = static_cast<double>(HW * cpg), mean = sum / n;
      double sq = 0; // second pass: exact two-pass variance
      for (int64_t r = 0; r < HW; ++r)
        for (int64_t j = 0; j < cpg; ++j) sq += (x[at(r, j)] - mean) * (x[at(r, j)] - mean);
      const double rstd = 1.0 / std::sqrt(sq / n + eps);
      for (int64_t r = 0; r < HW; ++r)
        for (int64_t j = 0; j < cpg; ++j) {
          double v = (x[at(r, j)] - mean) * rstd * gamma[g * cpg + j] + beta[g * cpg + j];
          y[at(r, j)] = silu ? pointwise::silu(v) : v;
        }
    }
  return y;
}

std::vector<double> layer_norm(const std::vector<float>& x, const std::vector<float>& gamma,
                               const std::vector<float>& beta, int64_t M, int64_t C, double eps) {
  std::vector<double> y(x.size());
  for (int64_t m = 0; m < M; ++m) {
    const float* row = x.data() + m * C;
    double sum = 0, sq = 0;
    for (int64_t c = 0; c < C; ++c) sum += row[c];
    const double mean = sum / static_cast<double>(C);
    for (int64_t c = 0; c < C; ++c) sq += (row[c] - mean) * (row[c] - mean);
    const double rstd = 1.0 / std::sqrt(sq / static_cast<double>(C) + eps);
    for (int64_t c = 0; c < C; ++c) y[m * C + c] = (row[c] - mean) * rstd * gamma[c] + beta[c];
  }
  return y;
}

double gelu(double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }
double silu(double v) { return v / (1.0 + std::exp(-v)); }

std::vector<double> geglu(const std::vector<float>& x, int64_t M, int64_t F) {
  std::vector<double> y(static_cast<size_t>(M * F));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t f = 0; f < F; ++f) y[m * F + f] = x[m * 2 * F + f] * gelu(x[m * 2 * F + F + f]);
  return y;
}

std::vector<double> timestep_embedding(float t, int64_t B, int64_t dim, bool flip_sin_to_cos, float freq_shift,
                                       float max_period) {
  const int64_t half = dim / 2;
  // PyTorch: exponent = -math.log(max_period) * arange(half, float32) / (half - shift); exp;
  // t[:, None].float() * freq. Every step rounds to fp32 (volatile keeps each rounding explicit).
  const float neg_log = static_cast<float>(-std::log(static_cast<double>(max_period)));
  const float denom = static_cast<float>(half) - freq_shift;
  std::vector<double> row(static_cast<size_t>(dim));
  for (int64_t k = 0; k < half; ++k) {
    volatile float e = neg_log * static_cast<float>(k);
    volatile float q = e / denom;
    volatile float freq = static_cast<float>(std::exp(static_cast<double>(q)));
    volatile float arg = t * freq;
    double c = std::cos(static_cast<double>(arg)), s = std::sin(static_cast<double>(arg));
    row[flip_sin_to_cos ? k : half + k] = c;
    row[flip_sin_to_cos ? half + k : k] = s;
  }
  std::vector<double> y;
  for (int64_t b = 0; b < B; ++b) y.insert(y.end(), row.begin(), row.end());
  return y;
}

std::vector<double> nchw_to_nhwc(const std::vector<float>& x, int64_t B, int64_t C, int64_t H, int64_t W) {
  std::vector<double> y(x.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) y[((b * H + h) * W + w) * C + c] = x[((b * C + c) * H + h) * W + w];
  return y;
}

std::vector<double> nhwc_to_nchw(const std::vector<float>& x, int64_t B, int64_t H, int64_t W, int64_t C) {
  std::vector<double> y(x.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) y[((b * C + c) * H + h) * W + w] = x[((b * H + h) * W + w) * C + c];
  return y;
}

std::vector<double> upsample_nearest2x(const std::vector<float>& x, int64_t B, int64_t H, int64_t W, int64_t C) {
  std::vector<double> y(x.size() * 4);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t oy = 0; oy < 2 * H; ++oy)
      for (int64_t ox = 0; ox < 2 * W; ++ox)
        for (int64_t c = 0; c < C; ++c)
          y[((b * 2 * H + oy) * 2 * W + ox) * C + c] = x[((b * H + oy / 2) * W + ox / 2) * C + c];
  return y;
}

bool bench_full_size() {
  const char* f = std::getenv("Z123_BENCH_FULL");
  return f && *f && std::string(f) != "0";
}

double bench_ms(vk::Device& device, const std::function<void(vk::Recording&)>& record, int reps) {
  {
    vk::Recording warm(device);
    record(warm);
    device.run(warm);
  }
  vk::Recording rec(device, 4);
  rec.timestamp("start");
  for (int i = 0; i < reps; ++i) record(rec);
  rec.timestamp("end");
  auto t0 = std::chrono::steady_clock::now();
  device.run(rec);
  double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (device.info().timestamps) return rec.timings().back().second / reps;
  return wall / reps;
}

} // namespace z123::test::pointwise
