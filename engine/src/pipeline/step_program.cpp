// The step schedule (step_program.hpp): the one level-ordered program per step, or the
// reference pass one step ahead on the side queue.
#include "pipeline/step_program.hpp"

#include <chrono>
#include <cstring>
#include <map>
#include <string>

#include "z123/error.hpp"
#include "z123/half.hpp"
#include "z123/parallel.hpp"

namespace z123::pipeline {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Step i's inputs into its step slot and into its rows of its reference slot.
void write_inputs(StepProgram& sp, int i, const StepInputs& in) {
  StepProgram::StepSlot& slot = sp.step_slot(i);
  StepProgram::ReferenceSlot& ref = sp.reference_slot(i);
  const size_t member = size_t(i % sp.steps_per_reference);
  std::memcpy(slot.params.mapped(), &in.params, sizeof in.params);
  write_host(slot.t_freq, in.t_freq);
  write_host(slot.anc_noise, in.anc_noise);
  write_host(ref.ref_noise, in.ref_noise, member * in.ref_noise.size());
  if (ref.t_rows.buffer) // one row per batch half of this step
    for (size_t r = 0; r < size_t(sp.halves); ++r)
      write_host(ref.t_rows, in.t_freq, (member * size_t(sp.halves) + r) * in.t_freq.size());
}

// The one program per step: step i's inputs are written once step i - 1 is done, and step
// i + 1's are made while step i runs.
std::vector<double> run_one_program(vk::Device& device, StepProgram& sp, int n, const StepHooks& hooks) {
  std::vector<double> ms;
  vk::Recording& rec = *sp.steps.front().rec;
  StepInputs next = hooks.make_inputs(0);
  for (int i = 0; i < n; ++i) {
    hooks.before_step(i);
    auto ts = Clock::now();
    write_inputs(sp, 0, next);
    const uint64_t done = device.submit(rec);
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

// The reference pass ahead, for groups of g steps (StepProgram): the main pass of step i waits
// for the reference pass of its group i / g on the side queue, and the reference pass of group
// j + 1 runs beside the main passes of group j. The reference pass of group j + 2 goes into
// reference slot j % 2 (and its steps' inputs into their step slots) once the last main pass of
// group j is done (the host waits for it); each reference pass waits for the one before (they
// share the reference pool and ref_in). A group past the last step runs its pass on the last
// step's inputs again: its rows are dead work, as in a partial group's rows.
// Presubmitted (Tuning::main_presubmit), main pass i + 1 is submitted while main pass i runs,
// waiting for it on the main timeline, so the main queue does not idle while the host wakes up
// and submits; not where after_step reads the latents (they would race the next pass). A step's
// time runs from the end of the step before (of the call, for step 0) to its end. Step i + 2g's
// inputs are made while main pass i runs. Whatever leaves this function, both queues are idle
// first: a pass still running would race the next image's writes into its slots.
std::vector<double> run_reference_ahead(vk::Device& device, StepProgram& sp, int n, const StepHooks& hooks) {
  const bool presubmit = device.tuning().main_presubmit && !hooks.after_step_reads_latents;
  const int g = sp.steps_per_reference, groups = (n + g - 1) / g;
  std::vector<double> ms;
  vk::InFlight last{device}; // the last submission to each queue
  uint64_t ref_of[2] = {0, 0};
  std::vector<uint64_t> main_of(sp.steps.size(), 0); // each step slot's last main pass
  std::map<int, StepInputs> made;                    // inputs made ahead, by step
  auto inputs_of = [&](int i) {
    auto it = made.find(i);
    if (it == made.end()) return hooks.make_inputs(i);
    StepInputs in = std::move(it->second);
    made.erase(it);
    return in;
  };
  auto submit_reference = [&](int j) {
    StepInputs in;
    for (int i = j * g; i < (j + 1) * g; ++i) {
      if (i < n) in = inputs_of(i);
      write_inputs(sp, i, in);
    }
    vk::Recording& rec = *sp.references[size_t(j % 2)].rec;
    last.side = last.side ? device.submit(rec, {{vk::QueueRole::Side, last.side}}) : device.submit(rec);
    ref_of[j % 2] = last.side;
  };
  auto submit_main = [&](int i) {
    hooks.before_step(i);
    const vk::TimelineWait ref{vk::QueueRole::Side, ref_of[(i / g) % 2]};
    vk::Recording& rec = *sp.step_slot(i).rec;
    last.main = last.main ? device.submit(rec, {ref, {vk::QueueRole::Main, last.main}}) : device.submit(rec, {ref});
    main_of[size_t(i) % main_of.size()] = last.main;
  };
  auto t_prev = Clock::now();
  hooks.before_step(0);
  submit_reference(0);
  submit_main(0);
  if (groups > 1) submit_reference(1); // slot 1: nothing of this call has used it
  for (int i = 0; i < n; ++i) {
    if (presubmit && i + 1 < n) submit_main(i + 1);
    if (i + 2 * g < n) made.emplace(i + 2 * g, hooks.make_inputs(i + 2 * g));
    device.wait(main_of[size_t(i) % main_of.size()]);
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
    // Main pass i was its group's last: that group's slots are free for the group after next.
    if ((i + 1) % g == 0 && i / g + 2 < groups) submit_reference(i / g + 2);
  }
  return ms;
}

} // namespace

std::vector<vk::Recording*> StepProgram::recordings() const {
  std::vector<vk::Recording*> r;
  for (const ReferenceSlot& s : references)
    if (s.rec) r.push_back(s.rec.get());
  for (const StepSlot& s : steps) r.push_back(s.rec.get());
  return r;
}

uint64_t StepProgram::cache_bytes() const {
  uint64_t b = context_kv->bytes() + (ref_context_kv ? ref_context_kv->bytes() : 0);
  for (const ReferenceSlot& s : references) b += s.cache->bytes();
  return b;
}

void write_host(const Tensor& t, const std::vector<float>& values, size_t first) {
  if (first + values.size() > size_t(t.numel()))
    throw internal_error("write_host: " + std::to_string(values.size()) + " values at " + std::to_string(first) +
                         " overrun " + t.describe());
  if (t.dtype == DType::F32) {
    std::memcpy(static_cast<float*>(t.buf().mapped()) + first, values.data(), values.size() * 4);
  } else {
    // Over the host's threads where large (the VAE's 512 x 512 input: 0.8 M values, 0.6 ms on
    // one core); the step's noise (70 K values) stays on this thread.
    auto* p = static_cast<uint16_t*>(t.buf().mapped()) + first;
    parallel_ranges(values.size(), 131072, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) p[i] = f32_to_f16(values[i]);
    });
  }
}

std::vector<double> run_steps(vk::Device& device, StepProgram& sp, int n, const StepHooks& hooks) {
  return sp.ahead() ? run_reference_ahead(device, sp, n, hooks) : run_one_program(device, sp, n, hooks);
}

} // namespace z123::pipeline
