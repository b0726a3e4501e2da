#include "pipeline/sampling_plan.hpp"

#include "z123/error.hpp"
#include "z123/sampling/scheduler.hpp"

namespace z123::pipeline {

SamplingPlan make_sampling_plan(const SchedulerConfig& config, int steps, const std::string& sampler,
                                const std::string& spacing, bool fp16) {
  if (steps < sampling::kMinInferenceSteps || steps > sampling::kMaxInferenceSteps)
    throw invalid_argument("steps must be between 1 and 200, not " + std::to_string(steps));
  sampling::Sampler s = sampling::parse_sampler(sampler);
  // The GPU step applies x' = a·x + b·v + σ_up·noise: the one-step samplers only.
  if (s != sampling::Sampler::EulerAncestral && s != sampling::Sampler::Euler)
    throw unsupported("sampler '" + sampler + "' is not available in the engine (use euler_a or euler)");
  sampling::SamplingPlan p = sampling::make_plan(config, steps, sampling::parse_timestep_spacing(spacing), s);
  SamplingPlan out;
  out.init_noise_sigma = p.init_noise_sigma;
  for (const auto& st : p.steps)
    out.steps.push_back({st.t, st.sigma, fp16 ? st.ref_sigma_f16 : st.sigma, st.c_in, st.a, st.b, st.sigma_up});
  return out;
}

} // namespace z123::pipeline
