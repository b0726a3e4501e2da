// zero123pp-bench-soak MODEL_DIR INPUT_IMAGE [--frames N] [--steps N] [--every N] [--device SEL]
//
// A soak of the engine API (the GPU machine has no GStreamer, so the element's soak runs in CI
// on lavapipe: tests/gst/test_soak.cpp): N generations on one engine with the input's size and
// content changing every frame (crops of INPUT_IMAGE of eight sizes, shifted per frame), at the
// default 640x960 output. Every --every frames it prints resident memory, the engine's device-
// memory high-water mark, open file descriptors and threads; at the end it compares the last
// sample with the one at frame N/2 and exits 1 if memory grew by more than 1% or descriptors or
// threads grew at all.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

// The same /proc readings as the element soak and the state-cycle test (header-only, so no
// link to the test support library).
#include "../tests/support/process_stats.hpp"
#include "z123/engine.hpp"
#include "z123/image/codec.hpp"
#include "z123/image/preprocess.hpp"

using namespace z123;

namespace {

// A w x h crop of `src` (RGB) starting at a per-frame offset, wrapping around.
Image crop(const Image& src, int w, int h, int frame) {
  Image out = Image::blank(w, h, 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      std::memcpy(out.row(y) + 3 * x, src.row((y + frame) % src.height) + 3 * ((x + 7 * frame) % src.width), 3);
  return out;
}

struct Sample {
  long rss_kib;
  uint64_t device_peak;
  int fds, threads;
};

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: zero123pp-bench-soak MODEL_DIR INPUT_IMAGE [--frames N] [--steps N] [--every N] "
                         "[--device SEL]\n");
    return 2;
  }
  int frames = 2000, steps = 28, every = 100;
  EngineOptions eo;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--frames")
      frames = std::stoi(argv[i + 1]);
    else if (a == "--steps")
      steps = std::stoi(argv[i + 1]);
    else if (a == "--every")
      every = std::stoi(argv[i + 1]);
    else if (a == "--device")
      eo.device = argv[i + 1];
    else {
      std::fprintf(stderr, "zero123pp-bench-soak: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  try {
    const Image src = to_rgb(load_image(argv[2]));
    auto engine = Engine::open(argv[1], eo);
    static const int sizes[][2] = {{320, 320}, {256, 320}, {320, 200}, {97, 131},
                                   {300, 299}, {64, 64},   {200, 300}, {150, 90}};
    GenerateOptions go;
    go.steps = steps;
    Sample base{}, last{};
    const auto t0 = std::chrono::steady_clock::now();
    std::printf("device %s, %d frames, %d steps\nframe  seconds  RSS_KiB  device_peak_MiB  fds  threads\n",
                engine->device_name().c_str(), frames, steps);
    for (int f = 0; f < frames; ++f) {
      const auto& s = sizes[f % 8];
      go.seed = static_cast<uint64_t>(f);
      GenerateResult r = engine->generate(crop(src, std::min(s[0], src.width), std::min(s[1], src.height), f), go);
      if ((f + 1) % every == 0 || f + 1 == frames) {
        last = {test::rss_kib(), r.peak_device_bytes, test::count_entries("/proc/self/fd"),
                test::count_entries("/proc/self/task")};
        const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("%5d  %7.1f  %7ld  %15.1f  %3d  %7d\n", f + 1, sec, last.rss_kib, last.device_peak / 1048576.0,
                    last.fds, last.threads);
        std::fflush(stdout);
        if (f + 1 == frames / 2) base = last;
      }
    }
    const bool ok = last.fds == base.fds && last.threads == base.threads && last.rss_kib <= base.rss_kib * 101 / 100 &&
                    last.device_peak <= base.device_peak * 101 / 100;
    std::printf("after frame %d: RSS %+ld KiB, device peak %+.1f MiB, fds %+d, threads %+d: %s\n", frames / 2,
                last.rss_kib - base.rss_kib, (double(last.device_peak) - double(base.device_peak)) / 1048576.0,
                last.fds - base.fds, last.threads - base.threads, ok ? "FLAT" : "GREW");
    return ok ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "zero123pp-bench-soak: %s\n", e.what());
    return 1;
  }
}
