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
//   (vk::Recording::order_by_levels): one slot, its `rec`;
// - the reference pass one step ahead on the device's side queue: the reference pass of step
//   i + 1 (`ref_rec` of slot (i + 1) % 2) runs beside the main pass of step i (`rec` of slot i % 2).
//   It depends on nothing a step computes (cond_lat, the step's noise and timestep, ctx), so only
//   its outputs, the keys/values cache and the time biases, and the step's host inputs need a
//   second copy.
struct StepProgram {
  int64_t h = 0, w = 0, hr = 0, wr = 0;
  int halves = 0;
  struct Slot {
    vk::Buffer params;                      // kernels::StepParams, host-visible
    Tensor t_freq;                          // [1, 320] host-visible: every batch row shares the timestep
    Tensor ref_noise, anc_noise;            // fp32 host-visible
    std::unique_ptr<nets::TimeBiases> time; // the step's conv1 biases, shared by both passes
    std::unique_ptr<nets::ReferenceCache> cache;
    std::unique_ptr<vk::Recording> ref_rec; // one step ahead: the reference pass (side queue)
    std::unique_ptr<vk::Recording> rec;     // the main pass (one step ahead), or the whole step
  };
  std::vector<Slot> slots;
  bool ahead() const { return slots.size() == 2; }
  // The cross-attention keys/values of ctx (constant over an image's steps), and the program
  // that computes them once per image (UNet::record_context).
  std::unique_ptr<nets::ReferenceCache> context_kv;
  std::unique_ptr<vk::Recording> context_rec;
  Tensor cond_lat, x;             // fp32 device
  Tensor ctx, ref_in, main_in, v; // storage dtype
  // Every recording of the step (finish(), the open report's counts).
  std::vector<vk::Recording*> recordings() const;
  uint64_t cache_bytes() const;
};

// One step's host inputs: the sampler's scalars, the timestep's frequencies, both noises.
struct StepInputs {
  kernels::StepParams params;
  std::vector<float> t_freq, ref_noise, anc_noise;
};

// Writes values into a host-visible tensor of its dtype (fp32, or fp16 converted).
void write_host(const Tensor& t, const std::vector<float>& values);

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
