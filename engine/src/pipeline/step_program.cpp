// The step schedule (step_program.hpp): the one level-ordered program per step, or the
// reference pass one step ahead on the side queue.
#include "pipeline/step_program.hpp"

#include <chrono>
#include <cstring>

#include "z123/error.hpp"
#include "z123/half.hpp"

namespace z123::pipeline {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

void write_inputs(StepProgram::Slot& slot, const StepInputs& in) {
  std::memcpy(slot.params.mapped(), &in.params, sizeof in.params);
  write_host(slot.t_freq, in.t_freq);
  write_host(slot.ref_noise, in.ref_noise);
  write_host(slot.anc_noise, in.anc_noise);
}

// The one program per step: step i's inputs are written once step i - 1 is done, and step
// i + 1's are made while step i runs.
std::vector<double> run_one_program(vk::Device& device, StepProgram& sp, int n, const StepHooks& hooks) {
  std::vector<double> ms;
  StepProgram::Slot& slot = sp.slots.front();
  StepInputs next = hooks.make_inputs(0);
  for (int i = 0; i < n; ++i) {
    hooks.before_step(i);
    auto ts = Clock::now();
    write_inputs(slot, next);
    const uint64_t done = device.submit(*slot.rec);
    try {
      if (i + 1 < n) next = hooks.make_inputs(i + 1);
    } catch (...) {
      device.wait(done); // nothing leaves while the step still reads its inputs
      throw;
    }
    device.wait(done);
    ms.push_back(ms_since(ts));
    hooks.after_step(i);
  }
  return ms;
}

// The reference pass one step ahead: step i's main pass waits for its reference pass on the
// side queue; the reference pass of step i + 1 is submitted right after it, into the other
// slot, whose last readers (step i - 1) are done: the host waited for that main pass, which had
// waited for its reference pass. Each reference pass waits for the one before (they share the
// reference pool and ref_in). Whatever leaves this function, the side queue is idle first: a
// reference pass still running would race the next image's writes into its slot.
std::vector<double> run_reference_ahead(vk::Device& device, StepProgram& sp, int n, const StepHooks& hooks) {
  std::vector<double> ms;
  uint64_t ref_done = 0;
  struct DrainSide {
    vk::Device& device;
    const uint64_t& value;
    ~DrainSide() {
      if (value) try {
          device.wait(vk::QueueRole::Side, value);
        } catch (const Error&) {
        }
    }
  } drain{device, ref_done};
  auto submit_reference = [&](int i, const StepInputs& in) {
    StepProgram::Slot& slot = sp.slots[size_t(i % 2)];
    write_inputs(slot, in);
    ref_done =
        ref_done ? device.submit(*slot.ref_rec, {{vk::QueueRole::Side, ref_done}}) : device.submit(*slot.ref_rec);
  };
  StepInputs next = hooks.make_inputs(0);
  hooks.before_step(0);
  submit_reference(0, next);
  if (n > 1) next = hooks.make_inputs(1);
  for (int i = 0; i < n; ++i) {
    hooks.before_step(i);
    auto ts = Clock::now();
    const uint64_t done = device.submit(*sp.slots[size_t(i % 2)].rec, {{vk::QueueRole::Side, ref_done}});
    try {
      if (i + 1 < n) submit_reference(i + 1, next);
      if (i + 2 < n) next = hooks.make_inputs(i + 2);
    } catch (...) {
      device.wait(done);
      throw;
    }
    device.wait(done);
    ms.push_back(ms_since(ts));
    hooks.after_step(i);
  }
  return ms;
}

} // namespace

std::vector<vk::Recording*> StepProgram::recordings() const {
  std::vector<vk::Recording*> r;
  for (const Slot& s : slots)
    for (vk::Recording* rec : {s.ref_rec.get(), s.rec.get()})
      if (rec) r.push_back(rec);
  return r;
}

uint64_t StepProgram::cache_bytes() const {
  uint64_t b = context_kv->bytes();
  for (const Slot& s : slots) b += s.cache->bytes();
  return b;
}

void write_host(const Tensor& t, const std::vector<float>& values) {
  if (t.dtype == DType::F32) {
    std::memcpy(t.buf().mapped(), values.data(), values.size() * 4);
  } else {
    auto* p = static_cast<uint16_t*>(t.buf().mapped());
    for (size_t i = 0; i < values.size(); ++i) p[i] = f32_to_f16(values[i]);
  }
}

std::vector<double> run_steps(vk::Device& device, StepProgram& sp, int n, const StepHooks& hooks) {
  return sp.ahead() ? run_reference_ahead(device, sp, n, hooks) : run_one_program(device, sp, n, hooks);
}

} // namespace z123::pipeline
