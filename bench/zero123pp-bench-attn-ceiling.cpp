// zero123pp-bench-attn-ceiling [--device SEL] [--reps N] [--trials | --khr]
//
// What bounds the tiled portable attention (common/attention_tiled.glsl), the largest part of the
// portable step: the UNet's level-0 and level-1 attention timed as the engine runs it and with one
// part taken away at a time (ATTN_ABLATE, kernels::detail::attention_ablated):
//   full        the engine's kernel
//   no P·V      S, the softmax and P's stores, no O += P·V
//   no S        every score 0: the softmax and P·V on constant weights
//   no softmax  P = the scaled scores: no row maxima, shuffles, exp2 or rescaling
//   no loads    every tile the first one's keys and values: no global loads after the first
//   tiles only  global loads, shared-memory stores and barriers
// What a part costs is roughly the full time less the time without it; the parts overlap, so the
// differences need not add up to the whole. Run it where the tiled kernel is the route
// (Z123_FORCE_PORTABLE=1 on a GPU with matrix units); it refuses otherwise, and needs a build with
// Z123_BENCH_VARIANTS=ON. Prints the median of 3 submissions of N repetitions each, after ~0.3 s
// of warm-up, and the rate the full kernel's multiply-adds would have at that time.
// --trials: instead of the ablations, the full kernel and each of its bench-only trials
// (kernels::tiled_attention_trials, Z123_ATTN_TILED_TRIAL), then the full kernel again (drift).
// --khr: the KHR cooperative-matrix route instead (the default on NVIDIA): the engine's kernel,
// each in-register-P alternative of kernels::khr_attention_knob_values (8 and 16 subgroups)
// and the ablations of kernels::khr_attention_ablations (Z123_ATTN_VARIANT's variants), then the
// engine's kernel again; at the main pass's levels 0-1 and the reference pass's (batch 4).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "z123/error.hpp"
#include "z123/kernels/attention.hpp"
#include "z123/kernels/kernels.hpp"
#include "z123/tensor.hpp"
#include "z123/vk/device.hpp"
#include "z123/vk/recording.hpp"

using namespace z123;
using namespace z123::kernels;

namespace {

Tensor random_tensor(vk::Device& dev, std::vector<int64_t> shape, const std::string& name) {
  Tensor t = make_tensor(dev, DType::F16, std::move(shape), name);
  std::vector<float> v(static_cast<size_t>(t.numel()));
  uint32_t s = 12345u + static_cast<uint32_t>(v.size());
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / 16777216.0f * 2.0f - 1.0f;
  }
  upload(dev, t, v);
  return t;
}

// Median milliseconds of one repetition of body: `reps` repetitions between timestamps per
// submission, submitted until ~0.3 s of GPU work has run, then 3 submissions timed.
double median_ms(vk::Device& dev, int reps, const std::function<void(vk::Recording&)>& body) {
  vk::Recording rec(dev, static_cast<uint32_t>(reps + 1));
  rec.timestamp("start");
  for (int r = 0; r < reps; ++r) {
    body(rec);
    rec.timestamp("rep");
  }
  double warm_ms = 0;
  for (int i = 0; i < 200 && (i < 2 || warm_ms < 300.0); ++i) {
    dev.run(rec);
    for (const auto& t : rec.timings()) warm_ms += t.second;
  }
  std::vector<double> t;
  for (int sub = 0; sub < 3; ++sub) {
    dev.run(rec);
    for (const auto& x : rec.timings())
      if (x.first == "rep") t.push_back(x.second);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  std::string device_sel;
  int reps = 10;
  bool trials = false, khr = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--device" && i + 1 < argc)
      device_sel = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      reps = std::max(3, std::atoi(argv[++i]));
    else if (a == "--trials")
      trials = true;
    else if (a == "--khr")
      khr = true;
    else {
      std::printf("usage: zero123pp-bench-attn-ceiling [--device SEL] [--reps N] [--trials | --khr]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  try {
    vk::Instance instance;
    vk::Device dev(instance, vk::choose_device(instance, device_sel));
    Kernels k(dev);
    std::printf("device: %s, driver %s; %d repetitions per submission\n", dev.info().name.c_str(),
                dev.info().driver_info.c_str(), reps);
    struct Problem {
      const char* name;
      int64_t b, heads, nq, nk, nk2;
    };
    const char* const kModes[] = {"full", "no P·V", "no S", "no softmax", "no loads", "tiles only"};
    static_assert(sizeof kModes / sizeof kModes[0] == detail::kAttentionAblations + 1);
    for (Problem s : {Problem{"L0 ref-attn 2x5x9600x13696x64", 2, 5, 9600, 9600, 4096},
                      Problem{"L1 ref-attn 2x10x2400x3424x64", 2, 10, 2400, 2400, 1024},
                      Problem{"reference pass L0 4x5x4096x4096x64", 4, 5, 4096, 4096, 0},
                      Problem{"reference pass L1 4x10x1024x1024x64", 4, 10, 1024, 1024, 0}}) {
      const int64_t d = 64, C = s.heads * d;
      Tensor q = random_tensor(dev, {s.b, s.nq, C}, "q"), kt = random_tensor(dev, {s.b, s.nk, C}, "k"),
             v = random_tensor(dev, {s.b, s.nk, C}, "v");
      // The reference pass's self-attention has no second source.
      std::optional<Tensor> k2, v2;
      if (s.nk2) {
        k2 = random_tensor(dev, {s.b, s.nk2, C}, "k2");
        v2 = random_tensor(dev, {s.b, s.nk2, C}, "v2");
      }
      const AttnOperand k2op = k2 ? AttnOperand{&*k2} : AttnOperand{}, v2op = v2 ? AttnOperand{&*v2} : AttnOperand{};
      Tensor o = make_tensor(dev, DType::F16, {s.b, s.nq, C}, "o");
      const AttentionParams p{s.heads, d, 0.0f, false};
      const std::string kernel = choose_attention_kernel(k, DType::F16, d, false, true, s.nq, s.heads * s.b).shader;
      if (!khr) {
        vk::Recording probe(dev); // never submitted: refuses a route without the ablations before any timing
        detail::attention_ablated(k, probe, {&q}, {&kt}, {&v}, o, p, k2op, v2op, 1);
      }
      std::printf("%s (%s):\n", s.name, kernel.c_str());
      const double macs = 2.0 * s.b * s.heads * s.nq * (s.nk + s.nk2) * d; // S and P·V
      if (khr) {
        std::vector<std::string> names{""};
        for (const std::string& name : khr_attention_knob_values())
          if (name.rfind("khrcm_cv", 0) == 0) names.push_back(name);
        for (const std::string& name : khr_attention_ablations()) names.push_back(name);
        names.push_back("");
        for (const std::string& name : names) {
          Tuning tuning = dev.tuning();
          tuning.attn_variant = name;
          Kernels kv(dev, tuning); // throws where the variant is not built or not available here
          const double ms =
              median_ms(dev, reps, [&](vk::Recording& r) { attention(kv, r, {&q}, {&kt}, {&v}, o, p, k2op, v2op); });
          std::printf("  %-22s %8.3f ms  (%5.1f TFLOP/s)\n", name.empty() ? "default" : name.c_str(), ms,
                      2.0 * macs / ms / 1e9);
          std::fflush(stdout);
        }
        continue;
      }
      if (trials) {
        std::vector<std::string> names{""};
        for (const std::string& t : tiled_attention_trials()) names.push_back(t);
        names.push_back("");
        for (const std::string& t : names) {
          Tuning tuning = dev.tuning();
          tuning.attn_tiled_trial = t;
          Kernels kt_kernels(dev, tuning);
          const double ms = median_ms(
              dev, reps, [&](vk::Recording& r) { attention(kt_kernels, r, {&q}, {&kt}, {&v}, o, p, k2op, v2op); });
          std::printf("  %-11s %8.3f ms  (%5.1f TFLOP/s)\n", t.empty() ? "default" : t.c_str(), ms,
                      2.0 * macs / ms / 1e9);
          std::fflush(stdout);
        }
        continue;
      }
      double full = 0;
      for (int mode = 0; mode <= detail::kAttentionAblations; ++mode) {
        const double ms = median_ms(dev, reps, [&](vk::Recording& r) {
          if (mode == 0)
            attention(k, r, {&q}, {&kt}, {&v}, o, p, k2op, v2op);
          else
            detail::attention_ablated(k, r, {&q}, {&kt}, {&v}, o, p, k2op, v2op, mode);
        });
        if (mode == 0) full = ms;
        std::printf("  %-11s %8.3f ms  (%+7.3f ms against full; full's work at this time: %5.1f TFLOP/s)\n",
                    kModes[mode], ms, ms - full, 2.0 * macs / ms / 1e9);
        std::fflush(stdout);
      }
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "zero123pp-bench-attn-ceiling: %s\n", e.what());
    return 1;
  }
}
