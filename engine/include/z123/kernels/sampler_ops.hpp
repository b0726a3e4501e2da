// Dispatches of the sampling loop's pointwise operations (shaders/sampler_ops.comp). Their
// scalars live in a device buffer (StepParams) that the host rewrites before each replay.
#pragma once

#include <cstdint>

#include "z123/kernels/kernels.hpp"

namespace z123::kernels {

struct StepParams {
  float sigma_ref, c_in, a, b, sigma_up, guidance;
  uint32_t halves, count; // count: elements of one half of the main latent
  uint32_t ref_count;     // elements of the reference input, all halves
};

// ref_in[h] = (cond_lat[h] + sigma_ref * noise[h]) * c_in for both halves (fp32 in, storage out).
// first: where ref_in and noise hold several steps' rows (one reference pass for several steps),
// the element at which this step's begin; cond_lat holds one step's.
void sampler_ref_input(Kernels& k, vk::Recording& rec, const vk::Buffer& params, const Tensor& cond_lat,
                       const Tensor& noise, const Tensor& ref_in, uint32_t total, uint32_t first = 0);
// main_in[h] = x * c_in for every half.
void sampler_main_input(Kernels& k, vk::Recording& rec, const vk::Buffer& params, const Tensor& x,
                        const Tensor& main_in, uint32_t total);
// x = a x + b guided(v) + sigma_up noise.
void sampler_step(Kernels& k, vk::Recording& rec, const vk::Buffer& params, const Tensor& x, const Tensor& v,
                  const Tensor& noise, uint32_t count);

} // namespace z123::kernels
