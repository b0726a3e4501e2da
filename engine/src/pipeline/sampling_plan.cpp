#include "pipeline/sampling_plan.hpp"

namespace z123::pipeline {

namespace {

// The engine's samplers are the ones the GPU step implements (x' = a·x + b·v + σ_up·noise);
// sampling:: also has the two-step DpmSolverPP2M for its host reference.
sampling::Sampler sampler_of(Sampler s) {
  return s == Sampler::Euler ? sampling::Sampler::Euler : sampling::Sampler::EulerAncestral;
}

sampling::TimestepSpacing spacing_of(Spacing s) {
  switch (s) {
  case Spacing::Linspace: return sampling::TimestepSpacing::Linspace;
  case Spacing::Leading: return sampling::TimestepSpacing::Leading;
  case Spacing::Trailing: break;
  }
  return sampling::TimestepSpacing::Trailing;
}

} // namespace

sampling::SamplingPlan make_sampling_plan(const SchedulerConfig& config, int steps, Sampler sampler, Spacing spacing) {
  return sampling::make_plan(config, steps, spacing_of(spacing), sampler_of(sampler));
}

} // namespace z123::pipeline
