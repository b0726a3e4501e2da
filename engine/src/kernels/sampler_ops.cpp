#include "z123/kernels/sampler_ops.hpp"

#include "kernels/shader_names.hpp"

namespace z123::kernels {

namespace {
constexpr uint32_t kGroup = 256;
}

void sampler_ref_input(Kernels& k, vk::Recording& rec, const vk::Buffer& params, const Tensor& cond_lat,
                       const Tensor& noise, const Tensor& ref_in, uint32_t total) {
  const auto& p = k.pipeline(variant("sampler_ref_input", ref_in.dtype), 4, 0);
  rec.dispatch(p, {vk::in(params), vk::in(cond_lat.buf()), vk::in(noise.buf()), vk::out(ref_in.buf())}, nullptr, 0,
               div_up(total, kGroup));
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
