// Training schedule and inference timesteps (spec §11.1, §11.2): the scheduler's __init__ and
// set_timesteps. fp32 values are produced by doing the operation in double and rounding once: for
// a product of two floats that is exact, and for a sum, quotient or square root of floats double
// has enough extra bits (53 >= 2*24 + 2) that the double-then-float result is the correctly
// rounded fp32 result, i.e. what torch's fp32 kernels give.
#include "z123/sampling/scheduler.hpp"

#include "sampling/numpy_compat.hpp"
#include "z123/error.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace z123::sampling {
namespace {

float f32(double v) { return static_cast<float>(v); }

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

} // namespace

BetaSchedule parse_beta_schedule(std::string_view s) {
  if (s == "linear") return BetaSchedule::Linear;
  if (s == "scaled_linear") return BetaSchedule::ScaledLinear;
  throw invalid_argument("scheduler: beta_schedule " + quoted(s) + ", expected \"linear\" or \"scaled_linear\"");
}

Prediction parse_prediction(std::string_view s) {
  if (s == "epsilon") return Prediction::Epsilon;
  if (s == "v_prediction") return Prediction::VPrediction;
  throw invalid_argument("scheduler: prediction_type " + quoted(s) + ", expected \"epsilon\" or \"v_prediction\"");
}

TimestepSpacing parse_timestep_spacing(std::string_view s) {
  if (s == "linspace") return TimestepSpacing::Linspace;
  if (s == "leading") return TimestepSpacing::Leading;
  if (s == "trailing") return TimestepSpacing::Trailing;
  throw invalid_argument("scheduler: timestep_spacing " + quoted(s) +
                         ", expected \"linspace\", \"leading\" or \"trailing\"");
}

Sampler parse_sampler(std::string_view s) {
  if (s == "euler_a" || s == "euler_ancestral") return Sampler::EulerAncestral;
  if (s == "euler") return Sampler::Euler;
  if (s == "dpmpp_2m") return Sampler::DpmSolverPP2M;
  throw invalid_argument("sampler " + quoted(s) + ", expected \"euler_a\", \"euler\" or \"dpmpp_2m\"");
}

const char* name(TimestepSpacing spacing) {
  switch (spacing) {
  case TimestepSpacing::Linspace: return "linspace";
  case TimestepSpacing::Leading: return "leading";
  case TimestepSpacing::Trailing: return "trailing";
  }
  return "?";
}

const char* name(Sampler sampler) {
  switch (sampler) {
  case Sampler::EulerAncestral: return "euler_a";
  case Sampler::Euler: return "euler";
  case Sampler::DpmSolverPP2M: return "dpmpp_2m";
  }
  return "?";
}

const char* name(Prediction prediction) {
  switch (prediction) {
  case Prediction::Epsilon: return "epsilon";
  case Prediction::VPrediction: return "v_prediction";
  }
  return "?";
}

TrainingSchedule make_training_schedule(const SchedulerConfig& config) {
  const int n = config.num_train_timesteps;
  if (n < 2) {
    throw invalid_argument("scheduler: num_train_timesteps is " + std::to_string(n) + ", expected >= 2");
  }
  if (!(config.beta_start > 0.0 && config.beta_start <= config.beta_end && config.beta_end < 1.0)) {
    throw invalid_argument("scheduler: beta_start " + std::to_string(config.beta_start) + " / beta_end " +
                           std::to_string(config.beta_end) + ", expected 0 < beta_start <= beta_end < 1");
  }
  if (config.rescale_betas_zero_snr) {
    throw unsupported("scheduler: rescale_betas_zero_snr = true is not implemented (v1.2 does not use it)");
  }
  TrainingSchedule s;
  s.prediction = parse_prediction(config.prediction_type);
  s.steps_offset = config.steps_offset;
  const auto count = static_cast<std::size_t>(n);
  s.betas.resize(count);
  switch (parse_beta_schedule(config.beta_schedule)) {
  case BetaSchedule::Linear: {
    // torch.linspace(fp32) equals the float64 linspace rounded to fp32 (spec §11.1; an fp32
    // step-wise linspace is 1 ulp off at t = 986).
    const auto lin = np::linspace(config.beta_start, config.beta_end, n);
    for (std::size_t i = 0; i < count; ++i) s.betas[i] = f32(lin[i]);
    break;
  }
  case BetaSchedule::ScaledLinear: {
    // SD's schedule: linspace of the square roots (fp32), squared in fp32.
    const auto lin = np::linspace(std::sqrt(config.beta_start), std::sqrt(config.beta_end), n);
    for (std::size_t i = 0; i < count; ++i) {
      const double r = f32(lin[i]);
      s.betas[i] = f32(r * r);
    }
    break;
  }
  }
  s.alphas.resize(count);
  s.alphas_cumprod.resize(count);
  s.sigmas.resize(count);
  double acc = 1.0; // torch's CPU cumprod accumulates in double and stores fp32
  for (std::size_t i = 0; i < count; ++i) {
    s.alphas[i] = f32(1.0 - static_cast<double>(s.betas[i]));
    acc *= static_cast<double>(s.alphas[i]);
    s.alphas_cumprod[i] = f32(acc);
    const double ac = s.alphas_cumprod[i];
    const float one_minus = f32(1.0 - ac);
    const float ratio = f32(static_cast<double>(one_minus) / ac);
    s.sigmas[i] = f32(std::sqrt(static_cast<double>(ratio)));
  }
  return s;
}

Timesteps set_timesteps(const TrainingSchedule& schedule, int n, TimestepSpacing spacing) {
  const int train = schedule.num_train_timesteps();
  if (n < kMinInferenceSteps || n > kMaxInferenceSteps) {
    throw invalid_argument("scheduler: " + std::to_string(n) + " inference steps, expected " +
                           std::to_string(kMinInferenceSteps) + " to " + std::to_string(kMaxInferenceSteps));
  }
  if (n > train) {
    throw invalid_argument("scheduler: " + std::to_string(n) +
                           " inference steps, more than num_train_timesteps = " + std::to_string(train));
  }
  Timesteps out;
  switch (spacing) {
  case TimestepSpacing::Linspace: {
    // np.linspace(0, train-1, n, dtype=float32)[::-1]: float64 values cast to fp32.
    const auto lin = np::linspace(0.0, static_cast<double>(train - 1), n);
    for (auto it = lin.rbegin(); it != lin.rend(); ++it) out.timesteps.push_back(f32(*it));
    break;
  }
  case TimestepSpacing::Leading: {
    // (np.arange(0, n) * (train // n)).round()[::-1].astype(float32) + steps_offset (in fp32).
    const int ratio = train / n;
    for (int i = n - 1; i >= 0; --i) {
      const float t = f32(static_cast<double>(i) * ratio);
      out.timesteps.push_back(f32(static_cast<double>(t) + schedule.steps_offset));
    }
    break;
  }
  case TimestepSpacing::Trailing: {
    // np.arange(train, 0, -train/n).round().astype(float32) - 1.
    const double ratio = static_cast<double>(train) / n;
    for (double v : np::arange(static_cast<double>(train), 0.0, -ratio)) {
      out.timesteps.push_back(f32(np::round_half_even(v)) - 1.0f);
    }
    break;
  }
  }
  // np.interp over [0 .. train-1] of the fp32 training sigmas (as float64), stored fp32; then 0.
  const std::vector<double> fp(schedule.sigmas.begin(), schedule.sigmas.end());
  for (float t : out.timesteps) out.sigmas.push_back(f32(np::interp_unit_grid(t, fp)));
  out.sigmas.push_back(0.0f);

  const float max_sigma = *std::max_element(out.sigmas.begin(), out.sigmas.end());
  if (spacing == TimestepSpacing::Leading) {
    // (sigmas.max() ** 2 + 1) ** 0.5, each op in fp32.
    const float sq = f32(static_cast<double>(max_sigma) * max_sigma);
    const float sum = f32(static_cast<double>(sq) + 1.0);
    out.init_noise_sigma = f32(std::sqrt(static_cast<double>(sum)));
  } else {
    out.init_noise_sigma = max_sigma;
  }
  return out;
}

} // namespace z123::sampling
