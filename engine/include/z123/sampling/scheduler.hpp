// Noise schedules and samplers of the denoising loop (spec §11), on the host. Everything here is
// scalar bookkeeping: the GPU step kernel takes the per-step scalars of a SamplingPlan, and the
// host reference step (step_host) defines what that kernel must compute.
//
// Numerics follow diffusers' EulerAncestralDiscreteScheduler as run by the reference (torch fp32 +
// numpy float64), so timesteps and sigmas match it bit for bit:
//   * training schedule: betas = linspace in float64 rounded to fp32 (spec §11.1), alphas fp32,
//     alphas_cumprod accumulated in double and stored fp32, sigma_train = sqrt((1-a)/a) in fp32;
//   * set_timesteps: numpy's arange / linspace / round-half-even / interp in float64, stored fp32;
//   * per-step coefficients: float64 from the fp32 sigmas, rounded once to fp32.
#pragma once

#include "z123/model/configs.hpp"

#include <span>
#include <string_view>
#include <vector>

namespace z123::sampling {

enum class BetaSchedule { Linear, ScaledLinear };
enum class Prediction { Epsilon, VPrediction };
enum class TimestepSpacing { Linspace, Leading, Trailing };

// EulerAncestral is the reference sampler. Euler is its deterministic sibling (eta = 0 DDIM is the
// same update in this sigma-space parameterization, see docs/rng.md "Samplers"). DpmSolverPP2M is
// the second-order multistep solver of k-diffusion's sample_dpmpp_2m on the same sigmas.
enum class Sampler { EulerAncestral, Euler, DpmSolverPP2M };

inline constexpr int kMinInferenceSteps = 1;
inline constexpr int kMaxInferenceSteps = 200;

// Parse / name the config and option strings; unknown strings throw InvalidArgument.
BetaSchedule parse_beta_schedule(std::string_view s);       // "linear" | "scaled_linear"
Prediction parse_prediction(std::string_view s);            // "epsilon" | "v_prediction"
TimestepSpacing parse_timestep_spacing(std::string_view s); // "linspace" | "leading" | "trailing"
Sampler parse_sampler(std::string_view s);                  // "euler_a" | "euler" | "dpmpp_2m"
const char* name(TimestepSpacing spacing);
const char* name(Sampler sampler);
const char* name(Prediction prediction);

// ---- training schedule (scheduler __init__) ------------------------------------------------------
struct TrainingSchedule {
  Prediction prediction = Prediction::VPrediction;
  int steps_offset = 0;              // only used by "leading" spacing
  std::vector<float> betas;          // [num_train_timesteps]
  std::vector<float> alphas;         // 1 - betas (fp32)
  std::vector<float> alphas_cumprod; // running product, accumulated in double, stored fp32
  std::vector<float> sigmas;         // sigma_train[i] = sqrt((1 - ac[i]) / ac[i]) in fp32

  int num_train_timesteps() const { return static_cast<int>(betas.size()); }
};

// Throws InvalidArgument / Unsupported for configs the engine cannot sample with (unknown strings,
// num_train_timesteps < 2, rescale_betas_zero_snr).
TrainingSchedule make_training_schedule(const SchedulerConfig& config);

// ---- inference timesteps (set_timesteps) ---------------------------------------------------------
struct Timesteps {
  std::vector<float> timesteps; // the UNet's t per step (fp32; fractional for linspace when n-1 ∤ 999)
  std::vector<float> sigmas;    // sigma per step, plus a terminal 0: size = timesteps.size() + 1
  float init_noise_sigma = 0;   // std of the initial latent noise

  int steps() const { return static_cast<int>(timesteps.size()); }
};

// n must be in [1, 200] and at most num_train_timesteps (InvalidArgument otherwise).
// NOTE: "trailing" reproduces numpy's np.arange exactly, including its length rule
// ceil(1000 / (1000 / n)), which for n = 61, 103, 121, 122 (with 1000 train steps) yields n + 1
// timesteps, the last being t = -1 with sigma_train[0]. diffusers runs those n + 1 steps too.
Timesteps set_timesteps(const TrainingSchedule& schedule, int n, TimestepSpacing spacing);

// ---- per-step scalars ------------------------------------------------------------------------------
// One denoising step k, with x the sigma-scaled latent (x = x0 + sigma * eps) and m the (guided)
// model output:
//   UNet input        = c_in * x
//   x0 (prediction)   = x0_x * x + x0_m * m
//   x_{k+1}           = a * x + b * m + c_prev * x0_{k-1} + sigma_up * noise_k
// x0_{k-1} is the previous step's x0 (only DpmSolverPP2M uses it; c_prev = 0 otherwise and at step
// 0). Reference pass (spec §10.3): noisy = (cond_lat + noise * sigma) * c_in, where the fp16
// reference uses ref_sigma_f16 (sigma rounded to fp16) instead of sigma.
struct StepScalars {
  float t;          // UNet timestep
  float sigma;      // sigma_k
  float sigma_next; // sigma_{k+1} (0 at the last step)
  float c_in;       // 1 / sqrt(sigma^2 + 1)
  float a;          // coefficient of x
  float b;          // coefficient of the model output
  float sigma_up;   // std of the fresh noise (EulerAncestral; 0 for the deterministic samplers)
  float sigma_down; // sigma the deterministic part steps to (EulerAncestral; sigma_next otherwise)
  float c_prev;     // coefficient of the previous step's x0 (DpmSolverPP2M)
  float x0_x;       // x0 = x0_x * x + x0_m * m
  float x0_m;
  float ref_sigma_f16; // sigma rounded to fp16 (reference-pass add_noise as the fp16 reference does)
};

struct SamplingPlan {
  Sampler sampler = Sampler::EulerAncestral;
  Prediction prediction = Prediction::VPrediction;
  TimestepSpacing spacing = TimestepSpacing::Trailing;
  float init_noise_sigma = 0; // initial latent = init_noise_sigma * N(0, 1)
  std::vector<StepScalars> steps;
};

std::vector<StepScalars> plan(const Timesteps& timesteps, Sampler sampler, Prediction prediction);

// Config + options -> plan. The spacing is an explicit option because the reference overrides the
// file's "linspace" with "trailing" (spec §2.2); pass parse_timestep_spacing(config.timestep_spacing)
// to follow the file.
SamplingPlan make_plan(const SchedulerConfig& config, int n, TimestepSpacing spacing, Sampler sampler);

// ---- host reference implementations (float64 math, one rounding to fp32 per output) --------------
// out = a*x + b*m + c_prev*x0_prev + sigma_up*noise. noise may be empty when sigma_up == 0 and
// x0_prev may be empty when c_prev == 0; every other span must have out's size (InvalidArgument
// otherwise). out may alias x.
void step_host(const StepScalars& s, std::span<const float> x, std::span<const float> model_output,
               std::span<const float> noise, std::span<const float> x0_prev, std::span<float> out);

// x0 = x0_x*x + x0_m*m (what DpmSolverPP2M keeps for the next step).
void predict_x0_host(const StepScalars& s, std::span<const float> x, std::span<const float> model_output,
                     std::span<float> x0);

// Reference-pass UNet input: out = (cond + noise * sigma) * c_in, with sigma = s.ref_sigma_f16 when
// fp16_sigma (the fp16 reference) or s.sigma otherwise.
void reference_input_host(const StepScalars& s, std::span<const float> cond, std::span<const float> noise,
                          bool fp16_sigma, std::span<float> out);

} // namespace z123::sampling
