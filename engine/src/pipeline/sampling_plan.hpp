// The per-step scalars of a sampling run (spec §10.3, §11), from the scheduler config, the step
// count, the sampler and the timestep spacing.
#pragma once

#include "z123/engine.hpp"
#include "z123/model/configs.hpp"
#include "z123/sampling/scheduler.hpp"

namespace z123::pipeline {

// The engine's plan: sampling::make_plan for the samplers the GPU step kernel implements
// (x' = a·x + b·v + σ_up·noise: euler_a and euler), with the step count checked. The reference
// latent's add_noise takes StepScalars::ref_sigma_f16 when the run is fp16, sigma otherwise.
// The step count is checked by check_generate_options, which generate() runs first.
sampling::SamplingPlan make_sampling_plan(const SchedulerConfig& config, int steps, Sampler sampler, Spacing spacing);

} // namespace z123::pipeline
