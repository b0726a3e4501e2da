#include "pipeline/host_math.hpp"

#include <algorithm>
#include <cmath>

#include "z123/error.hpp"
#include "z123/half.hpp"

namespace z123::pipeline {

std::vector<float> posterior_sample(const std::vector<float>& moments, const std::vector<float>& noise, int64_t c) {
  const size_t pixels = moments.size() / static_cast<size_t>(2 * c);
  if (noise.size() != pixels * static_cast<size_t>(c))
    throw internal_error("posterior noise has " + std::to_string(noise.size()) + " values, expected " +
                         std::to_string(pixels * static_cast<size_t>(c)));
  std::vector<float> out(noise.size());
  for (size_t p = 0; p < pixels; ++p)
    for (int64_t ch = 0; ch < c; ++ch) {
      float mean = moments[p * 2 * c + ch];
      float logvar = std::clamp(moments[p * 2 * c + c + ch], -30.0f, 20.0f);
      out[p * c + ch] = mean + std::exp(0.5f * logvar) * noise[p * c + ch];
    }
  return out;
}

std::vector<float> conditioning_context(const std::vector<float>& e, const std::vector<float>& img,
                                        const std::vector<double>& ramp, int64_t tokens, int64_t dim, int halves,
                                        bool fp16) {
  if (static_cast<int64_t>(ramp.size()) != tokens)
    throw model_error("model_index.json has " + std::to_string(ramp.size()) + " ramping_coefficients, the text " +
                      "encoder produces " + std::to_string(tokens) + " tokens");
  auto r = [&](float v) { return fp16 ? round_f16(v) : v; };
  std::vector<float> ctx(static_cast<size_t>(halves * tokens * dim));
  size_t base = halves == 2 ? static_cast<size_t>(tokens * dim) : 0;
  if (halves == 2) std::copy(e.begin(), e.end(), ctx.begin());
  for (int64_t j = 0; j < tokens; ++j) {
    float coeff = r(static_cast<float>(ramp[static_cast<size_t>(j)]));
    for (int64_t d = 0; d < dim; ++d) {
      size_t i = static_cast<size_t>(j * dim + d);
      ctx[base + i] = r(e[i] + r(coeff * img[static_cast<size_t>(d)]));
    }
  }
  return ctx;
}

std::vector<float> unscale_latents(const std::vector<float>& x, double scaling_factor) {
  std::vector<float> z(x.size());
  for (size_t i = 0; i < x.size(); ++i) z[i] = static_cast<float>((x[i] / 0.75 + 0.22) / scaling_factor);
  return z;
}

} // namespace z123::pipeline
