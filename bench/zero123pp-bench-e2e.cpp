// zero123pp-bench-e2e MODEL_DIR INPUT_IMAGE [--golden G.safetensors] [--runs N] [--precision P]
//                     [--steps N] [--device SEL] [--vision-in-vram] [--path ROUTE]
//
// --path measures one kernel route through the engine's own switches (docs/devices.md):
// portable (Z123_FORCE_PORTABLE=1), khr | nv | nv2 (Z123_KERNEL_PATH), khr:MxNxK[@S] (the KHR
// path with that fragment shape, Z123_COOPMAT_SHAPE); auto (default) is the engine's choice.
//
// End-to-end timing of the engine (load, first image, warm images; peak device memory), and with
// --golden an end-to-end parity check against the official Zero123PlusPipeline run recorded by
// tests/reference/make_pipeline_golden.py (same tensor names as tests/data/golden/pipeline.
// safetensors): its noise streams and CLIP input are injected, then the latents after every step
// and the final image are compared (relative L2, byte differences), and a last line says PASS or
// FAIL against the project's tolerances (parity_limits; exit status 3 on FAIL). --runs 0 opens
// the engine (which records the programs for 640x960) and prints its memory report without
// running them.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "z123/engine.hpp"
#include "z123/engine_testing.hpp"
#include "z123/image/codec.hpp"
#include "z123/io/safetensors.hpp"

using namespace z123;

namespace {

double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}

// The end-to-end parity the project holds to (issue 11, README): the latents after every step and
// the decoded image in relative L2, and the 8-bit image in levels; fp16 rounds every stored
// activation, fp32 only sums in another order.
struct ParityLimits {
  double rel_l2;
  int levels;
};
ParityLimits parity_limits(Precision p) { return p == Precision::F32 ? ParityLimits{1e-5, 1} : ParityLimits{2e-3, 2}; }

std::vector<std::vector<float>> split(const TensorView& v) {
  std::vector<float> all = to_f32(v);
  size_t n = all.size() / static_cast<size_t>(v.shape[0]);
  std::vector<std::vector<float>> out;
  for (int64_t i = 0; i < v.shape[0]; ++i)
    out.emplace_back(all.begin() + static_cast<long>(i * n), all.begin() + static_cast<long>((i + 1) * n));
  return out;
}

// Sets the environment the engine reads at open for --path; false for an unknown route.
bool apply_path(const std::string& path) {
  if (path == "auto") return true;
  if (path == "portable") return setenv("Z123_FORCE_PORTABLE", "1", 1) == 0;
  const std::string api = path.substr(0, path.find(':'));
  if (api != "khr" && api != "nv" && api != "nv2") return false;
  setenv("Z123_KERNEL_PATH", api.c_str(), 1);
  if (path.size() > api.size()) {
    if (api != "khr") return false;
    setenv("Z123_COOPMAT_SHAPE", path.substr(api.size() + 1).c_str(), 1);
  }
  return true;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: zero123pp-bench-e2e MODEL_DIR INPUT_IMAGE [--golden G] [--runs N] [--precision P] "
                         "[--steps N] [--device SEL] [--vision-in-vram] [--path ROUTE] [--memory auto|normal|low]\n");
    return 2;
  }
  std::string golden_path, precision = "auto", device, path = "auto", memory = "auto";
  int runs = 3, steps = 28;
  bool vision_in_vram = false;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--golden" && i + 1 < argc)
      golden_path = argv[++i];
    else if (a == "--runs" && i + 1 < argc)
      runs = std::atoi(argv[++i]);
    else if (a == "--precision" && i + 1 < argc)
      precision = argv[++i];
    else if (a == "--steps" && i + 1 < argc)
      steps = std::atoi(argv[++i]);
    else if (a == "--device" && i + 1 < argc)
      device = argv[++i];
    else if (a == "--vision-in-vram") // EngineOptions::vision_weights_in_host_memory = false
      vision_in_vram = true;
    else if (a == "--path" && i + 1 < argc)
      path = argv[++i];
    else if (a == "--memory" && i + 1 < argc) // EngineOptions::memory
      memory = argv[++i];
  }
  if (!apply_path(path)) {
    std::fprintf(stderr, "zero123pp-bench-e2e: --path %s: expected auto, portable, khr, nv, nv2 or khr:MxNxK\n",
                 path.c_str());
    return 2;
  }
  try {
    auto t0 = std::chrono::steady_clock::now();
    EngineOptions eo;
    eo.precision = parse_option<Precision>("--precision", precision);
    eo.device = device;
    eo.prepare_width = 640; // the size generated below: pipelines are created in open()
    eo.prepare_height = 960;
    eo.vision_weights_in_host_memory = !vision_in_vram;
    eo.memory = parse_option<MemoryLayout>("--memory", memory);
    auto engine = Engine::open(argv[1], eo);
    std::printf("engine: %s, %s, path %s, %s memory layout, weights %.0f MiB, open %.2f s\n",
                engine->device_name().c_str(), option_name(engine->precision()), path.c_str(),
                engine->low_memory() ? "low" : "normal", engine->weight_bytes() / 1048576.0,
                engine->load_ms() / 1000.0);
    std::fputs(format_load_report(engine->load_report()).c_str(), stdout);
    // --runs 0: the memory the recorded programs hold, without running them (open records them).
    if (runs == 0) std::fputs(engine->memory_report().c_str(), stdout);
    Image input = load_image(argv[2]);
    GenerateOptions go;
    go.steps = steps;
    for (int r = 0; r < runs; ++r) {
      go.seed = static_cast<uint64_t>(r);
      GenerateResult res = engine->generate(input, go);
      const auto& t = res.timings;
      const double stepping_ms = t.sampling_ms - t.weights_restore_ms;
      double step_avg = t.step_ms.empty() ? 0 : stepping_ms / t.step_ms.size();
      char restore[64] = "";
      if (engine->low_memory())
        std::snprintf(restore, sizeof restore, "UNet weights back %.1f ms, ", t.weights_restore_ms);
      std::printf("image %d: %.3f s (preprocess %.1f ms, condition %.1f ms, %s%zu steps %.1f ms = %.2f ms/step, "
                  "decode %.1f ms), peak device memory %.0f MiB%s\n",
                  r + 1, t.total_ms / 1000.0, t.preprocess_ms, t.condition_ms, restore, t.step_ms.size(), stepping_ms,
                  step_avg, t.decode_ms, res.peak_device_bytes / 1048576.0, r == 0 ? "  (first image)" : "");
      if (r == 0) std::fputs(engine->memory_report().c_str(), stdout);
      if (r == 0) save_png("/tmp/zero123pp-bench-e2e.png", res.image);
    }
    std::printf("process start to end of image %d: %.2f s\n", runs,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

    if (!golden_path.empty()) {
      SafetensorsFile g = SafetensorsFile::open(golden_path);
      InjectedInputs inj;
      inj.clip_input = to_f32(g.at("input.clip"));
      if (const TensorView* v = g.find("input.vae")) inj.vae_input = to_f32(*v);
      inj.posterior_cond = to_f32(g.at("noise.vae_cond"));
      inj.posterior_zero = to_f32(g.at("noise.vae_zero"));
      inj.initial = to_f32(g.at("noise.init"));
      inj.reference = split(g.at("noise.ref"));
      inj.ancestral = split(g.at("noise.ancestral"));
      const TensorView& lat = g.at("latents"); // [steps+1, 1, 4, h, w]
      GenerateOptions po;
      po.steps = static_cast<int>(lat.shape[0] - 1);
      po.height = static_cast<int>(lat.shape[3] * 8);
      po.width = static_cast<int>(lat.shape[4] * 8);
      po.inject = &inj;
      GenerateCapture captured;
      po.capture = &captured;
      GenerateResult res = engine->generate(input, po);
      auto want = split(lat);
      std::printf("parity vs official pipeline (%d steps, %dx%d):\n", po.steps, po.width, po.height);
      double worst_latent = 0;
      for (size_t i = 0; i < captured.latents.size(); ++i) {
        const double e = rel_l2(captured.latents[i], want[i + 1]);
        worst_latent = std::max(worst_latent, e);
        if (i < 3 || i + 3 >= captured.latents.size()) std::printf("  latent after step %2zu: rel L2 %.3e\n", i + 1, e);
      }
      const double image_l2 = rel_l2(captured.decoded, to_f32(g.at("image")));
      std::printf("  decoded image [0,1]: rel L2 %.3e\n", image_l2);
      std::vector<float> u8 = to_f32(g.at("image_u8"));
      int max_diff = 0;
      double sum = 0;
      size_t n = static_cast<size_t>(po.width) * static_cast<size_t>(po.height);
      for (size_t p = 0; p < n; ++p)
        for (size_t c = 0; c < 3; ++c) {
          int d = std::abs(int(res.image.pixels[p * 4 + c]) - int(u8[p * 3 + c]));
          max_diff = std::max(max_diff, d);
          sum += d;
        }
      std::printf("  uint8 image: max diff %d levels, mean %.3f levels\n", max_diff, sum / (3.0 * n));
      const ParityLimits lim = parity_limits(engine->precision());
      const bool pass = captured.latents.size() == static_cast<size_t>(po.steps) && worst_latent <= lim.rel_l2 &&
                        image_l2 <= lim.rel_l2 && max_diff <= lim.levels;
      std::printf("parity: %s (%s: worst latent %.3e, image %.3e, %d levels; limits rel L2 %.0e, %d levels)\n",
                  pass ? "PASS" : "FAIL", option_name(engine->precision()), worst_latent, image_l2, max_diff,
                  lim.rel_l2, lim.levels);
      if (!pass) return 3;
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "zero123pp-bench-e2e: %s\n", e.what());
    return 1;
  }
}
