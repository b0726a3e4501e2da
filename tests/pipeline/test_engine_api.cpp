// The engine API's behaviour on the tiny model (lavapipe): recordings replayed across calls give
// identical results for the same seed and different ones for another seed; cancellation stops a
// call with a Cancelled error and leaves the engine usable; bad arguments are rejected up front.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "support/check.hpp"
#include "support/golden.hpp"
#include "z123/engine.hpp"
#include "z123/engine_testing.hpp"
#include "z123/image/codec.hpp"

using namespace z123;

namespace {

std::unique_ptr<Engine> open_model(const std::filesystem::path& dir, const std::string& memory = "auto",
                                   Precision precision = Precision::Auto) {
  EngineOptions eo;
  eo.validation = true;
  eo.precision = precision;
  eo.memory = parse_option<MemoryLayout>("memory", memory);
  if (const char* d = std::getenv("Z123_TEST_DEVICE")) eo.device = d;
  return Engine::open(dir, eo);
}

// The fast synthetic model (64 px VAE branch): these tests check the API's behaviour, not the
// numbers (PipelineParity does those, on the tiny model against the official pipeline).
std::unique_ptr<Engine> open_fast() { return open_model(test::fast_model_dir()); }

// The fast model with its programs prepared in open() for quick()'s size.
std::unique_ptr<Engine> open_prepared() {
  EngineOptions eo;
  eo.validation = true;
  eo.prepare_width = 128;
  eo.prepare_height = 192;
  if (const char* d = std::getenv("Z123_TEST_DEVICE")) eo.device = d;
  return Engine::open(test::fast_model_dir(), eo);
}

GenerateOptions quick(uint64_t seed) {
  GenerateOptions o;
  o.steps = 1;
  o.width = 128;
  o.height = 192;
  o.seed = seed;
  return o;
}

} // namespace

TEST(EngineApi, ReplayedCallsAreDeterministicPerSeedAndCancellable) {
  auto engine = open_fast();
  Image input = load_image(test::golden_dir() / "pipeline_input.png");
  Image a = engine->generate(input, quick(5)).image;
  Image b = engine->generate(input, quick(6)).image;
  Image a2 = engine->generate(input, quick(5)).image; // every recording replayed, none re-made
  EXPECT_EQ(a.pixels, a2.pixels);
  EXPECT_NE(a.pixels, b.pixels);

  std::atomic<bool> cancel{true};
  GenerateOptions c = quick(5);
  c.cancel = &cancel;
  try {
    engine->generate(input, c);
    FAIL() << "expected a Cancelled error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Cancelled);
  }
  EXPECT_EQ(engine->generate(input, quick(5)).image.pixels, a.pixels); // still usable
  EXPECT_EQ(engine->validation_errors(), 0u);
}

// Winograd convs (Z123_CONV_WINOGRAD=on; auto leaves them off on a CPU device) in the low-memory
// layout too, whose weights take turns in memory reserved for them: the transformed weights are
// 16/9 the size of the checkpoint's and must fit it; the images are the normal layout's bytes.
TEST(EngineApi, WinogradConvsGiveTheSameImagesInBothLayouts) {
  test::ScopedEnv on("Z123_CONV_WINOGRAD", "on");
  Image input = load_image(test::golden_dir() / "pipeline_input.png");
  GenerateOptions two_steps = quick(5);
  two_steps.steps = 2;
  auto normal = open_fast();
  Image a = normal->generate(input, two_steps).image;
  normal.reset();
  auto low = open_model(test::fast_model_dir(), "low");
  EXPECT_TRUE(low->low_memory());
  EXPECT_EQ(low->generate(input, two_steps).image.pixels, a.pixels);
  EXPECT_EQ(low->generate(input, two_steps).image.pixels, a.pixels);
  EXPECT_EQ(low->validation_errors(), 0u);
}

// Low-memory mode moves the UNet's weights out of the way of the conditioning and decoding
// activations and copies them back before each image's sampling: the images must be the same
// bytes as in the normal layout, for a second and third image too (the copy back happened).
// Its peak is measured at full size on a GPU (bench/gpu_final.sh lowmem): at this model's size
// the allocator's 256 MiB blocks hide the difference.
TEST(EngineApi, LowMemoryModeGivesTheSameImages) {
  Image input = load_image(test::golden_dir() / "pipeline_input.png");
  GenerateOptions two_steps = quick(5), other = quick(6);
  two_steps.steps = other.steps = 2;
  auto normal = open_fast();
  EXPECT_FALSE(normal->low_memory()) << "auto must keep the normal layout on a CPU device";
  Image a = normal->generate(input, two_steps).image, b = normal->generate(input, other).image;
  normal.reset();
  auto low = open_model(test::fast_model_dir(), "low");
  EXPECT_TRUE(low->low_memory());
  EXPECT_EQ(low->generate(input, two_steps).image.pixels, a.pixels);
  EXPECT_EQ(low->generate(input, other).image.pixels, b.pixels);
  EXPECT_EQ(low->generate(input, two_steps).image.pixels, a.pixels);
  EXPECT_NE(low->memory_report().find("low-memory layout"), std::string::npos) << low->memory_report();
  // One pool for both passes there: the report says so rather than naming an empty pool of its own.
  EXPECT_NE(low->memory_report().find("(the reference pass's too)"), std::string::npos) << low->memory_report();
  // From inside a running call the report would wait for itself: refused instead.
  GenerateOptions asking = quick(5);
  bool refused = false;
  asking.on_step = [&](int, int) {
    try {
      low->memory_report();
    } catch (const Error& e) {
      refused = e.kind() == ErrorKind::InvalidArgument;
    }
  };
  low->generate(input, asking);
  EXPECT_TRUE(refused);
  EXPECT_EQ(low->validation_errors(), 0u);
  try {
    open_model(test::fast_model_dir(), "tiny");
    FAIL() << "expected InvalidArgument for memory mode 'tiny'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("auto, normal or low"), std::string::npos) << e.what();
  }
}

// The reference pass one step ahead on the device's side queue (StepProgram; the knobs are read
// from the environment when the engine opens its device, so the test sets them there):
// Z123_REFERENCE_QUEUE=shared runs that schedule on lavapipe's one queue, and
// Z123_REFERENCE_STEPS=1 a reference pass per step. The images must be the same bytes as the
// one-program step's, over three steps (both slots, the first one twice), for another seed, after
// a call cancelled half-way (its reference pass of the next step was in flight), and again for the
// first seed; also with each main pass submitted only after the one before
// (Z123_MAIN_PRESUBMIT=0). The low-memory layout keeps the one program.
TEST(EngineApi, ReferencePassAheadGivesTheSameImages) {
  Image input = load_image(test::golden_dir() / "pipeline_input.png");
  GenerateOptions three = quick(5), other = quick(6);
  three.steps = other.steps = 3;
  Image a, b;
  {
    test::ScopedEnv off("Z123_REFERENCE_QUEUE", "off");
    auto one_program = open_fast();
    a = one_program->generate(input, three).image;
    b = one_program->generate(input, other).image;
    EXPECT_EQ(one_program->memory_report().find("ahead"), std::string::npos);
  }
  test::ScopedEnv shared("Z123_REFERENCE_QUEUE", "shared"), per_step("Z123_REFERENCE_STEPS", "1");
  auto ahead = open_fast();
  EXPECT_EQ(ahead->generate(input, three).image.pixels, a.pixels);
  std::atomic<bool> cancel{false};
  GenerateOptions cancelled = other;
  cancelled.cancel = &cancel;
  cancelled.on_step = [&](int done, int) {
    if (done == 1) cancel = true;
  };
  try {
    ahead->generate(input, cancelled);
    FAIL() << "expected a Cancelled error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Cancelled) << e.what();
  }
  EXPECT_EQ(ahead->generate(input, other).image.pixels, b.pixels);
  EXPECT_EQ(ahead->generate(input, three).image.pixels, a.pixels);
  EXPECT_NE(ahead->memory_report().find("one step ahead"), std::string::npos) << ahead->memory_report();
  EXPECT_EQ(ahead->validation_errors(), 0u);
  ahead.reset();
  { // each main pass submitted only once the one before is done (Tuning::main_presubmit off)
    test::ScopedEnv no_presubmit("Z123_MAIN_PRESUBMIT", "0");
    auto plain = open_fast();
    EXPECT_EQ(plain->generate(input, three).image.pixels, a.pixels);
    EXPECT_EQ(plain->validation_errors(), 0u);
  }
  auto low = open_model(test::fast_model_dir(), "low");
  EXPECT_EQ(low->generate(input, three).image.pixels, a.pixels);
  EXPECT_EQ(low->memory_report().find("ahead"), std::string::npos);
  EXPECT_EQ(low->validation_errors(), 0u);
}

// One reference pass for two steps (Z123_REFERENCE_STEPS=2, the default where the pass runs
// ahead; Z123_REFERENCE_QUEUE=shared on lavapipe): the same math as a pass per step but for the
// time injection's rounding in the reference pass (UNet::record_time_rows), so every step's latents
// stay within kPairTolerance of the one program's, for 1 to 5 steps (a group of one; whole groups;
// a last group with a step past the end). Then its own images are the same bytes again after a
// call cancelled inside a group and after one cancelled at a group's end, with each main pass
// submitted only after the one before, and where the caller captures the latents (no presubmit).
TEST(EngineApi, OneReferencePassForTwoSteps) {
  // fp32 on lavapipe: differences in the last bits of the reference keys and values, carried
  // through the steps; measured 0.4-3.1e-6 relative L2 over the 15 latents.
  constexpr double kPairTolerance = 1e-5;
  Image input = load_image(test::golden_dir() / "pipeline_input.png");
  std::vector<GenerateCapture> one(6), pairs(6);
  auto run = [&](Engine& e, int steps, GenerateCapture& cap) {
    GenerateOptions o = quick(7);
    o.steps = steps;
    o.capture = &cap;
    return e.generate(input, o).image;
  };
  std::vector<Image> one_images(6);
  {
    test::ScopedEnv off("Z123_REFERENCE_QUEUE", "off");
    auto e = open_model(test::fast_model_dir(), "auto", Precision::F32);
    for (int n = 1; n <= 5; ++n) one_images[size_t(n)] = run(*e, n, one[size_t(n)]);
  }
  test::ScopedEnv shared("Z123_REFERENCE_QUEUE", "shared");
  auto e = open_model(test::fast_model_dir(), "auto", Precision::F32);
  for (int n = 1; n <= 5; ++n) {
    SCOPED_TRACE(std::to_string(n) + " steps");
    run(*e, n, pairs[size_t(n)]);
    ASSERT_EQ(pairs[size_t(n)].latents.size(), size_t(n));
    for (int i = 0; i < n; ++i) {
      const test::ErrorReport rep =
          test::compare(pairs[size_t(n)].latents[size_t(i)], test::to_double(one[size_t(n)].latents[size_t(i)]));
      EXPECT_LE(rep.rel_l2, kPairTolerance) << "step " << i << ": " << rep.summary();
      EXPECT_EQ(rep.nonfinite, 0u);
    }
  }
  EXPECT_NE(e->memory_report().find("for 2 steps at a time"), std::string::npos) << e->memory_report();
  GenerateOptions five = quick(7);
  five.steps = 5;
  const Image first = e->generate(input, five).image;
  for (int cancel_after : {1, 2}) { // inside a group (after step 1 of 0-1), at its end
    SCOPED_TRACE("cancelled after step " + std::to_string(cancel_after));
    std::atomic<bool> cancel{false};
    GenerateOptions cancelled = five;
    cancelled.seed = 8;
    cancelled.cancel = &cancel;
    cancelled.on_step = [&](int done, int) {
      if (done == cancel_after) cancel = true;
    };
    EXPECT_THROW(e->generate(input, cancelled), Error);
    EXPECT_EQ(e->generate(input, five).image.pixels, first.pixels);
  }
  EXPECT_EQ(e->validation_errors(), 0u);
  e.reset();
  test::ScopedEnv no_presubmit("Z123_MAIN_PRESUBMIT", "0");
  auto plain = open_model(test::fast_model_dir(), "auto", Precision::F32);
  EXPECT_EQ(plain->generate(input, five).image.pixels, first.pixels);
  GenerateCapture cap;
  EXPECT_EQ(run(*plain, 5, cap).pixels, first.pixels);
  EXPECT_EQ(plain->validation_errors(), 0u);
}

// open() reports the prepared step program's dispatches and barriers. The reference and main passes
// share levels (vk::Recording::order_by_levels), so there are about half as many barriers as
// dispatches (the tiny model: 745 dispatches, 374 barriers; 720 in recorded order).
TEST(EngineApi, StepProgramRunsBothPassesSideBySide) {
  auto engine = open_prepared();
  const LoadReport& r = engine->load_report();
  ASSERT_GT(r.step_dispatches, 0u);
  EXPECT_LT(r.step_barriers * 3, r.step_dispatches * 2) << r.step_barriers << " barriers for " << r.step_dispatches;
  EXPECT_NE(format_load_report(r).find("step program"), std::string::npos);
  // The scratch report names the reference pass's own pool (the normal layout), and the memory
  // that sampling's pools and caches share by turns with conditioning and decoding.
  EXPECT_NE(engine->memory_report().find("reference pass's"), std::string::npos);
  EXPECT_NE(engine->memory_report().find("taking turns with the sampling pools and step caches"), std::string::npos)
      << engine->memory_report();
}

// The scratch pools are laid out from a first, unrun recording of the programs (Workspace
// planning) both in open() for the prepared size and in generate() for a size it meets: the two
// give the same pools, and a call at another size and back gives the same images.
TEST(EngineApi, PoolsArePlannedForThePreparedSizeAndForNewOnes) {
  Image input = load_image(test::golden_dir() / "pipeline_input.png");
  auto pools = [](const std::string& report) {
    const size_t at = report.find("sampling scratch pool");
    return at == std::string::npos ? std::string("none") : report.substr(at, report.find('\n', at) - at);
  };
  auto prepared = open_prepared();
  const std::string at_open = pools(prepared->memory_report());
  Image a = prepared->generate(input, quick(5)).image;
  EXPECT_EQ(pools(prepared->memory_report()), at_open) << "the prepared programs were recorded again";
  auto fresh = open_fast();
  EXPECT_EQ(fresh->generate(input, quick(5)).image.pixels, a.pixels);
  EXPECT_EQ(pools(fresh->memory_report()), at_open);
  GenerateOptions wide = quick(5);
  wide.width = 256;
  fresh->generate(input, wide);
  EXPECT_EQ(fresh->generate(input, quick(5)).image.pixels, a.pixels);
  EXPECT_EQ(pools(fresh->memory_report()), at_open);
  EXPECT_EQ(prepared->validation_errors() + fresh->validation_errors(), 0u);
}

TEST(EngineApi, BadArgumentsAreRejectedBeforeAnyWork) {
  auto engine = open_fast();
  Image input = load_image(test::golden_dir() / "pipeline_input.png");
  for (auto [steps, width, height] : {std::tuple{0, 128, 192}, std::tuple{201, 128, 192}, std::tuple{1, 100, 192}}) {
    GenerateOptions o = quick(1);
    o.steps = steps;
    o.width = width;
    o.height = height;
    EXPECT_THROW(engine->generate(input, o), Error) << steps << " " << width;
  }
  Image empty;
  EXPECT_THROW(engine->generate(empty, quick(1)), Error);
}

TEST(EngineApi, OptionChecksNeedNoModel) {
  EXPECT_NO_THROW(check_generate_options(quick(1)));
  auto rejects = [](GenerateOptions o, const char* says) {
    try {
      check_generate_options(o);
      ADD_FAILURE() << "accepted: " << says;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  for (float g : {std::nanf(""), INFINITY, -INFINITY, 1e30f, -0.5f, 100.5f}) {
    GenerateOptions o = quick(1);
    o.guidance_scale = g;
    rejects(o, "guidance scale");
  }
  GenerateOptions o = quick(1);
  o.height = 128; // 128 / 3 is not a whole row of views
  rejects(o, "2 x 3 grid");
  o = quick(1);
  o.width = 8192;
  rejects(o, "between 64 and 4096");
  o = quick(1);
  o.steps = 0;
  rejects(o, "steps");
}

// The enumerated options' names go both ways, and a bad name is an error naming the option, the
// value and every accepted name (the command line and the element show it as it is).
TEST(EngineApi, OptionNamesParseBothWaysAndBadOnesAreClearErrors) {
  for (Sampler s : {Sampler::EulerAncestral, Sampler::Euler})
    EXPECT_EQ(parse_option<Sampler>("sampler", option_name(s)), s);
  for (Spacing s : {Spacing::Trailing, Spacing::Linspace, Spacing::Leading})
    EXPECT_EQ(parse_option<Spacing>("spacing", option_name(s)), s);
  for (Precision p : {Precision::Auto, Precision::F16, Precision::F32})
    EXPECT_EQ(parse_option<Precision>("precision", option_name(p)), p);
  for (MemoryLayout m : {MemoryLayout::Auto, MemoryLayout::Normal, MemoryLayout::Low})
    EXPECT_EQ(parse_option<MemoryLayout>("memory", option_name(m)), m);
  try {
    parse_option<Sampler>("--sampler", "ddpm");
    ADD_FAILURE() << "ddpm accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_STREQ(e.what(), "--sampler must be euler_a or euler, not 'ddpm'");
  }
  EXPECT_THROW(parse_option<Spacing>("spacing", ""), Error);
  EXPECT_THROW(parse_option<MemoryLayout>("memory", "huge"), Error);
}

// The threading contract of engine.hpp: concurrent calls on one engine are serialized and each
// gives its seed's result, while a second engine on the same device runs beside them; re-entry
// from the progress callback is refused instead of deadlocking. Without guidance (one half, no
// zero-image encode) and on the fast synthetic model, to keep it short on lavapipe.
TEST(EngineApi, ConcurrentCallsAreSerializedAndTwoEnginesShareADevice) {
  auto engine = open_model(test::fast_model_dir());
  auto second = open_model(test::fast_model_dir()); // same device, its own programs and memory
  Image input = load_image(test::golden_dir() / "pipeline_input.png");
  GenerateOptions o = quick(5);
  o.guidance_scale = 1.0f;
  const Image want = engine->generate(input, o).image;

  Image got[3];
  std::thread t0([&] { got[0] = engine->generate(input, o).image; });
  std::thread t1([&] { got[1] = engine->generate(input, o).image; });
  std::thread t2([&] { got[2] = second->generate(input, o).image; });
  t0.join();
  t1.join();
  t2.join();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(got[i].pixels, want.pixels) << "call " << i;

  GenerateOptions nested = o;
  bool refused = false;
  nested.on_step = [&](int, int) {
    try {
      engine->generate(input, o);
    } catch (const Error& e) {
      refused = e.kind() == ErrorKind::InvalidArgument;
    }
  };
  EXPECT_EQ(engine->generate(input, nested).image.pixels, want.pixels);
  EXPECT_TRUE(refused);
  EXPECT_EQ(engine->validation_errors(), 0u);
  EXPECT_EQ(second->validation_errors(), 0u);
}
