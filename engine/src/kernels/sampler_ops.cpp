#include "z123/kernels/sampler_ops.hpp"

#include <string>

#include "kernels/shader_names.hpp"
#include "z123/error.hpp"

namespace z123::kernels {

namespace {
constexpr uint32_t kGroup = 256;
}

void sampler_ref_input(Kernels& k, vk::Recording& rec, const vk::Buffer& params, const Tensor& cond_lat,
                       const Tensor& noise, const Tensor& ref_in, uint32_t total, uint32_t first) {
  if (uint64_t(first) + total > uint64_t(ref_in.numel()) || uint64_t(first) + total > uint64_t(noise.numel()) ||
      uint64_t(total) > uint64_t(cond_lat.numel()))
    throw invalid_argument("sampler_ref_input: elements [" + std::to_string(first) + ", " +
                           std::to_string(uint64_t(first) + total) + ") do not fit " + ref_in.describe() + ", " +
                           noise.describe() + " and " + cond_lat.describe());
  const auto& p = k.pipeline(variant("sampler_ref_input", ref_in.dtype), 4, sizeof first);
  rec.dispatch(p, {vk::in(params), vk::in(cond_lat.buf()), vk::in(noise.buf()), vk::out(ref_in.buf())}, &first,
               sizeof first, div_up(total, kGroup));
}

void sampler_main_input(Kernels& k, vk::Recording& rec, const vk::Buffer& params, const Tensor& x,
                        const Tensor& main_in, uint32_t total) {
  const auto& p = k.pipeline(variant("sampler_main_input", main_in.dtype), 3, 0);
  rec.dispatch(p, {vk::in(params), vk::in(x.buf()), vk::out(main_in.buf())}, nullptr, 0, div_up(total, kGroup));
}

void sampler_step(Kernels& k, vk::Recording& rec, const vk::Buffer& params, const Tensor& x, const Tensor& v,
                  const Tensor& noise, uint32_t count) {
  const auto& p = k.pipeline(variant("sampler_step", v.dtype), 4, 0);
  rec.dispatch(p, {vk::in(params), vk::out(x.buf()), vk::in(v.buf()), vk::in(noise.buf())}, nullptr, 0,
               div_up(count, kGroup));
}

} // namespace z123::kernels
