#include "pipeline/sampling_plan.hpp"

#include "z123/error.hpp"

namespace z123::pipeline {

sampling::SamplingPlan make_sampling_plan(const SchedulerConfig& config, int steps, const std::string& sampler,
                                          const std::string& spacing) {
  if (steps < sampling::kMinInferenceSteps || steps > sampling::kMaxInferenceSteps)
    throw invalid_argument("steps must be between 1 and 200, not " + std::to_string(steps));
  sampling::Sampler s = sampling::parse_sampler(sampler);
  // The GPU step applies x' = a·x + b·v + σ_up·noise: the one-step samplers only.
  if (s != sampling::Sampler::EulerAncestral && s != sampling::Sampler::Euler)
    throw unsupported("sampler '" + sampler + "' is not available in the engine (use euler_a or euler)");
  return sampling::make_plan(config, steps, sampling::parse_timestep_spacing(spacing), s);
}

} // namespace z123::pipeline
