// The recorded UNet step and the schedule that replays it (spec §3 step 3): what the step's
// programs hold, and the loop that submits them once per step with new scalars and noise.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "z123/kernels/sampler_ops.hpp"
#include "z123/nets/unet.hpp"
#include "z123/tensor.hpp"
#include "z123/vk/device.hpp"
#include "z123/vk/recording.hpp"

namespace z123::pipeline {

// The recorded UNet step for one (latent size, halves): replayed every step with new
// parameters, noise and timestep written into host-visible buffers before each submit.
// Two schedules (Engine::Impl::reference_ahead):
// - one program per step, the reference pass and the main pass side by side by levels
//   (vk::Recording::order_by_levels): one step slot, whose `rec` holds both, and one reference
//   slot (no `rec` of its own);
// - the reference pass ahead on the device's side queue, one reference pass for every
//   `steps_per_reference` (g) steps (Tuning::reference_steps): reference slot j % 2 runs the
//   pass of steps jg .. jg + g - 1, at batch g x halves, beside the main passes of the g steps
//   before; step i's main pass runs in step slot i % 2g and reads its rows of the cache of
//   reference slot (i / g) % 2 (from batch row (i % g) x halves). The reference pass depends on
//   nothing a step computes (cond_lat, the steps' noise and timesteps, ctx), so only its outputs
//   (the keys/values cache, the steps' time biases) and the steps' host inputs need more copies.
//   Where g > 1 its rows have different timesteps: it takes per-row time injections (`rows`,
//   UNet::record_time_rows) and ctx at its batch (`ref_ctx`, with keys/values of its own).
struct StepProgram {
  int64_t h = 0, w = 0, hr = 0, wr = 0;
  int halves = 0;
  int steps_per_reference = 1; // g
  // One step's inputs, its time biases (folded: UNet::record_time) and its main pass.
  struct StepSlot {
    vk::Buffer params;                      // kernels::StepParams, host-visible
    Tensor t_freq;                          // [1, 320] host-visible: every batch row shares the timestep
    Tensor anc_noise;                       // fp32 host-visible
    std::unique_ptr<nets::TimeBiases> time; // computed by its reference program
    std::unique_ptr<vk::Recording> rec;     // the main pass (ahead), or the whole step
  };
  // One reference pass for g steps: their noise, its keys/values and its program (ahead only).
  struct ReferenceSlot {
    Tensor ref_noise;                       // fp32 host-visible, [g x halves, hr, wr, c]
    Tensor t_rows;                          // g > 1: [g x halves, 320] host-visible, each row's step
    std::unique_ptr<nets::TimeBiases> rows; // g > 1: the per-row time injections
    std::unique_ptr<nets::ReferenceCache> cache;
    std::unique_ptr<vk::Recording> rec; // ahead: the reference pass (side queue); else null
  };
  std::vector<StepSlot> steps;
  std::vector<ReferenceSlot> references;
  bool ahead() const { return references.front().rec != nullptr; }
  StepSlot& step_slot(int i) { return steps[size_t(i) % steps.size()]; }
  ReferenceSlot& reference_slot(int i) { return references[size_t(i / steps_per_reference) % references.size()]; }
  // The cross-attention keys/values of ctx (constant over an image's steps), and the program
  // that computes them once per image (UNet::record_context); where g > 1, those of ref_ctx too.
  std::unique_ptr<nets::ReferenceCache> context_kv, ref_context_kv;
  std::unique_ptr<vk::Recording> context_rec;
  Tensor cond_lat, x;                      // fp32 device
  Tensor ctx, ref_ctx, ref_in, main_in, v; // storage dtype; ref_ctx: g > 1, ctx g times
  // Every recording of the step (finish(), the open report's counts).
  std::vector<vk::Recording*> recordings() const;
  uint64_t cache_bytes() const;
};

// One step's host inputs: the sampler's scalars, the timestep's frequencies, both noises.
struct StepInputs {
  kernels::StepParams params;
  std::vector<float> t_freq, ref_noise, anc_noise;
};

// Writes values into a host-visible tensor of its dtype (fp32, or fp16 converted), from element
// `first` on.
void write_host(const Tensor& t, const std::vector<float>& values, size_t first = 0);

// What the schedule asks of its caller. make_inputs(i) runs on the host while the GPU runs an
// earlier step (the noise alone is ~1 ms of CPU per step); before_step(i) may throw to stop
// before step i (cancellation); after_step(i) runs once step i is done (capture, progress).
// after_step_reads_latents: after_step(i) reads the latents step i wrote, so step i + 1 may not
// be submitted before it returns (Tuning::main_presubmit).
struct StepHooks {
  std::function<StepInputs(int)> make_inputs;
  std::function<void(int)> before_step;
  std::function<void(int)> after_step;
  bool after_step_reads_latents = false;
};

// Runs steps 0 .. n-1 of `sp` on its schedule; returns each step's wall time in milliseconds.
// Nothing the GPU still reads is left behind when it throws.
std::vector<double> run_steps(vk::Device& device, StepProgram& sp, int n, const StepHooks& hooks);

} // namespace z123::pipeline
