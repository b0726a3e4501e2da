// Per-step scalars of the samplers and the host reference step (spec §11.3). Each sampler's update
// is folded into x_{k+1} = a*x + b*m + c_prev*x0_{k-1} + sigma_up*noise so the GPU needs a single
// fused kernel whatever the sampler; the folding is done in float64 from the fp32 sigmas (the
// values diffusers sees), then rounded once to fp32. docs/rng.md "Samplers" derives the formulas.
#include "z123/sampling/scheduler.hpp"

#include "z123/error.hpp"
#include "z123/half.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace z123::sampling {
namespace {

float f32(double v) { return static_cast<float>(v); }

struct X0Coefficients {
  double x; // coefficient of x
  double m; // coefficient of the model output
};

// x0 from the model output: v-prediction x0 = x/(s^2+1) - v*s/sqrt(s^2+1); epsilon x0 = x - s*eps.
X0Coefficients x0_coefficients(Prediction prediction, double sigma) {
  if (prediction == Prediction::Epsilon) return {1.0, -sigma};
  const double s2p1 = sigma * sigma + 1.0;
  return {1.0 / s2p1, -sigma / std::sqrt(s2p1)};
}

// An Euler step to sigma_to from sigma with d = (x - x0)/sigma: x + d*(sigma_to - sigma)
// = x*(1 + r) - r*x0 with r = (sigma_to - sigma)/sigma.
void fold_euler(StepScalars& st, const X0Coefficients& x0, double sigma, double sigma_to) {
  const double r = (sigma_to - sigma) / sigma;
  st.a = f32(1.0 + r - r * x0.x);
  st.b = f32(-r * x0.m);
}

void check_size(const char* what, const char* span_name, std::size_t got, std::size_t want) {
  if (got != want) {
    throw invalid_argument(std::string(what) + ": " + span_name + " has " + std::to_string(got) +
                           " elements, expected " + std::to_string(want));
  }
}

} // namespace

std::vector<StepScalars> plan(const Timesteps& ts, Sampler sampler, Prediction prediction) {
  const std::size_t n = ts.timesteps.size();
  if (ts.sigmas.size() != n + 1) {
    throw invalid_argument("sampling plan: " + std::to_string(ts.sigmas.size()) + " sigmas for " + std::to_string(n) +
                           " timesteps, expected timesteps + 1");
  }
  std::vector<StepScalars> steps(n);
  for (std::size_t k = 0; k < n; ++k) {
    StepScalars& st = steps[k];
    const double sigma = ts.sigmas[k];
    const double next = ts.sigmas[k + 1];
    if (!(sigma > 0.0) || !(next >= 0.0)) {
      throw invalid_argument("sampling plan: step " + std::to_string(k) + " has sigma " + std::to_string(sigma) +
                             " -> " + std::to_string(next) + ", expected sigma > 0 and next >= 0");
    }
    st.t = ts.timesteps[k];
    st.sigma = ts.sigmas[k];
    st.sigma_next = ts.sigmas[k + 1];
    st.c_in = f32(1.0 / std::sqrt(sigma * sigma + 1.0));
    st.ref_sigma_f16 = round_f16(st.sigma);
    const X0Coefficients x0 = x0_coefficients(prediction, sigma);
    st.x0_x = f32(x0.x);
    st.x0_m = f32(x0.m);
    st.c_prev = 0.0f;
    st.sigma_up = 0.0f;
    st.sigma_down = st.sigma_next;
    switch (sampler) {
    case Sampler::EulerAncestral: {
      // diffusers: sigma_up = sqrt(next^2 (sigma^2 - next^2) / sigma^2), sigma_down = sqrt(next^2 - up^2).
      const double up2 = next * next * (sigma * sigma - next * next) / (sigma * sigma);
      const double up = std::sqrt(std::max(up2, 0.0));
      const double down = std::sqrt(std::max(next * next - up * up, 0.0));
      st.sigma_up = f32(up);
      st.sigma_down = f32(down);
      fold_euler(st, x0, sigma, down);
      break;
    }
    case Sampler::Euler: fold_euler(st, x0, sigma, next); break;
    case Sampler::DpmSolverPP2M: {
      // k-diffusion sample_dpmpp_2m with t = -log(sigma), h = t_next - t:
      //   x' = (next/sigma) x - expm1(-h) D,  D = x0 (first step / last step)
      //   D = (1 + 1/(2r)) x0 - 1/(2r) x0_prev,  r = h_prev / h   (otherwise)
      const double ratio = next / sigma;
      const double w_d = 1.0 - ratio; // = -expm1(-h)
      double w_cur = 1.0;
      double w_prev = 0.0;
      if (k > 0 && next > 0.0) {
        const double h = std::log(sigma) - std::log(next);
        const double h_prev = std::log(static_cast<double>(ts.sigmas[k - 1])) - std::log(sigma);
        const double half_inv_r = h / (2.0 * h_prev);
        w_cur = 1.0 + half_inv_r;
        w_prev = -half_inv_r;
      }
      st.a = f32(ratio + w_d * w_cur * x0.x);
      st.b = f32(w_d * w_cur * x0.m);
      st.c_prev = f32(w_d * w_prev);
      break;
    }
    }
  }
  return steps;
}

SamplingPlan make_plan(const SchedulerConfig& config, int n, TimestepSpacing spacing, Sampler sampler) {
  const TrainingSchedule schedule = make_training_schedule(config);
  const Timesteps ts = set_timesteps(schedule, n, spacing);
  SamplingPlan p;
  p.sampler = sampler;
  p.prediction = schedule.prediction;
  p.spacing = spacing;
  p.init_noise_sigma = ts.init_noise_sigma;
  p.steps = plan(ts, sampler, schedule.prediction);
  return p;
}

void step_host(const StepScalars& s, std::span<const float> x, std::span<const float> model_output,
               std::span<const float> noise, std::span<const float> x0_prev, std::span<float> out) {
  const std::size_t n = out.size();
  check_size("step_host", "x", x.size(), n);
  check_size("step_host", "model_output", model_output.size(), n);
  const bool use_noise = s.sigma_up != 0.0f;
  const bool use_prev = s.c_prev != 0.0f;
  if (use_noise || !noise.empty()) check_size("step_host", "noise", noise.size(), n);
  if (use_prev || !x0_prev.empty()) check_size("step_host", "x0_prev", x0_prev.size(), n);
  const double a = s.a, b = s.b, c = s.c_prev, up = s.sigma_up;
  for (std::size_t i = 0; i < n; ++i) {
    double v = a * x[i] + b * model_output[i];
    if (use_prev) v += c * x0_prev[i];
    if (use_noise) v += up * noise[i];
    out[i] = f32(v);
  }
}

void predict_x0_host(const StepScalars& s, std::span<const float> x, std::span<const float> model_output,
                     std::span<float> x0) {
  check_size("predict_x0_host", "x", x.size(), x0.size());
  check_size("predict_x0_host", "model_output", model_output.size(), x0.size());
  const double cx = s.x0_x, cm = s.x0_m;
  for (std::size_t i = 0; i < x0.size(); ++i) x0[i] = f32(cx * x[i] + cm * model_output[i]);
}

void reference_input_host(const StepScalars& s, std::span<const float> cond, std::span<const float> noise,
                          bool fp16_sigma, std::span<float> out) {
  check_size("reference_input_host", "cond", cond.size(), out.size());
  check_size("reference_input_host", "noise", noise.size(), out.size());
  const double sigma = fp16_sigma ? s.ref_sigma_f16 : s.sigma;
  const double c_in = s.c_in;
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = f32((cond[i] + noise[i] * sigma) * c_in);
}

} // namespace z123::sampling
