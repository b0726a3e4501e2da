// The step schedule (step_program.hpp): the one level-ordered program per step, or the
// reference pass one step ahead on the side queue.
#include "pipeline/step_program.hpp"

#include <chrono>
#include <cstring>

#include "z123/error.hpp"
#include "z123/half.hpp"
#include "z123/parallel.hpp"

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

// The reference pass one step ahead: main pass i waits for reference pass i on the side queue,
// and reference pass i + 1 runs beside main pass i. Reference pass i + 2 goes into slot i % 2
// once main pass i is done (the host waits for it; it had waited for reference pass i); each
// reference pass waits for the one before (they share the reference pool and ref_in).
// Presubmitted (Tuning::main_presubmit), main pass i + 1 is submitted while main pass i runs,
// waiting for it on the main timeline, so the main queue does not idle while the host wakes up
// and submits; not where after_step reads the latents (they would race the next pass). A step's
// time runs from the end of the step before (of the call, for step 0) to its end. Whatever
// leaves this function, both queues are idle first: a pass still running would race the next
// image's writes into its slot.
std::vector<double> run_reference_ahead(vk::Device& device, StepProgram& sp, int n, const StepHooks& hooks) {
  const bool presubmit = device.tuning().main_presubmit && !hooks.after_step_reads_latents;
  std::vector<double> ms;
  vk::InFlight last{device};                        // the last submission to each queue
  uint64_t ref_of[2] = {0, 0}, main_of[2] = {0, 0}; // each slot's last submissions
  auto submit_reference = [&](int i, const StepInputs& in) {
    StepProgram::Slot& slot = sp.slots[size_t(i % 2)];
    write_inputs(slot, in);
    last.side =
        last.side ? device.submit(*slot.ref_rec, {{vk::QueueRole::Side, last.side}}) : device.submit(*slot.ref_rec);
    ref_of[i % 2] = last.side;
  };
  auto submit_main = [&](int i) {
    hooks.before_step(i);
    vk::Recording& rec = *sp.slots[size_t(i % 2)].rec;
    const vk::TimelineWait ref{vk::QueueRole::Side, ref_of[i % 2]};
    last.main = last.main ? device.submit(rec, {ref, {vk::QueueRole::Main, last.main}}) : device.submit(rec, {ref});
    main_of[i % 2] = last.main;
  };
  auto t_prev = Clock::now();
  StepInputs next = hooks.make_inputs(0);
  hooks.before_step(0);
  submit_reference(0, next);
  if (n > 1) next = hooks.make_inputs(1);
  submit_main(0);
  if (n > 1) submit_reference(1, next); // slot 1: nothing of this call has used it
  for (int i = 0; i < n; ++i) {
    if (presubmit && i + 1 < n) submit_main(i + 1);
    if (i + 2 < n) next = hooks.make_inputs(i + 2);
    device.wait(main_of[i % 2]);
    const auto t_done = Clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t_done - t_prev).count());
    t_prev = t_done;
    hooks.after_step(i);
    if (i + 1 < n) {
      if (presubmit)
        hooks.before_step(i + 1); // a cancel from after_step(i) stops here
      else
        submit_main(i + 1);
    }
    if (i + 2 < n) submit_reference(i + 2, next); // slot i % 2: main pass i is done
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
    // Over the host's threads where large (the VAE's 512 x 512 input: 0.8 M values, 0.6 ms on
    // one core); the step's noise (70 K values) stays on this thread.
    auto* p = static_cast<uint16_t*>(t.buf().mapped());
    parallel_ranges(values.size(), 131072, [&](size_t first, size_t last) {
      for (size_t i = first; i < last; ++i) p[i] = f32_to_f16(values[i]);
    });
  }
}

std::vector<double> run_steps(vk::Device& device, StepProgram& sp, int n, const StepHooks& hooks) {
  return sp.ahead() ? run_reference_ahead(device, sp, n, hooks) : run_one_program(device, sp, n, hooks);
}

} // namespace z123::pipeline
