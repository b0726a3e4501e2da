// The per-step scalars of a sampling run (spec §10.3, §11), from the scheduler config, the step
// count, the sampler and the timestep spacing.
#pragma once

#include <string>
#include <vector>

#include "z123/model/configs.hpp"

namespace z123::pipeline {

struct PlannedStep {
  float t = 0;         // UNet timestep (may be fractional with linspace)
  float sigma = 0;     // σ_k
  float sigma_ref = 0; // add_noise σ for the reference latent (fp16-rounded when the run is fp16)
  float c_in = 0;      // 1 / sqrt(σ_k² + 1)
  float a = 0, b = 0;  // x_{k+1} = a·x + b·v + sigma_up·noise
  float sigma_up = 0;
};

struct SamplingPlan {
  std::vector<PlannedStep> steps;
  float init_noise_sigma = 0;
};

// sampler: "euler_a" | "euler"; spacing: "trailing" | "linspace" | "leading". Throws
// InvalidArgument for unknown names or steps outside 1..200.
SamplingPlan make_sampling_plan(const SchedulerConfig& config, int steps, const std::string& sampler,
                                const std::string& spacing, bool fp16);

} // namespace z123::pipeline
