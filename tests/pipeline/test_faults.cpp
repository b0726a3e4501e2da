// Fault injection (z123/fault.hpp) while opening the fast synthetic model and generating one image: each
// kind of call that can fail on a real system (device memory, buffer and pipeline creation,
// queue submission and waiting as on a lost device, reading a weight file) is made to fail at
// its 1st, 2nd, 3rd, 5th, 8th, ... call, until the call count runs past what one open and one
// generation make. Each failure must surface as a z123::Error of the expected kind whose message
// names what failed; afterwards, with nothing armed, a new engine opens and gives the same image
// as before, with no validation error, and no file descriptor has leaked. The low-memory layout
// (its turn-memory reservation, host copies and the copy back before sampling) goes through the
// allocation, submission and wait points as well, and so does the schedule with the reference
// pass one step ahead (Z123_REFERENCE_QUEUE=shared on lavapipe), whose side-queue submissions and
// waits fail the same way while the other queue may still run.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "support/check.hpp"
#include "support/golden.hpp"
#include "support/process_stats.hpp"
#include "z123/engine.hpp"
#include "z123/fault.hpp"
#include "z123/image/codec.hpp"

using namespace z123;

namespace {

EngineOptions tiny_options(const char* memory = "auto") {
  EngineOptions eo;
  eo.validation = true;
  eo.memory = parse_option<MemoryLayout>("memory", memory);
  if (const char* d = std::getenv("Z123_TEST_DEVICE")) eo.device = d;
  return eo;
}

// Without guidance (one half, no zero-image encode): each generation is short on lavapipe.
GenerateOptions quick() {
  GenerateOptions o;
  o.steps = 2;
  o.guidance_scale = 1.0f;
  o.width = 128;
  o.height = 192;
  o.seed = 7;
  return o;
}

struct Expectation {
  FaultPoint point;
  ErrorKind kind;
  const char* names;                     // a part of the message that says what failed
  const char* memory = "auto";           // EngineOptions::memory
  const char* reference_queue = nullptr; // Z123_REFERENCE_QUEUE while the test runs (the device reads it)
};

class FaultInjection : public ::testing::TestWithParam<Expectation> {
protected:
  void TearDown() override { disarm_faults(); }
};

// The image without faults, once per schedule in this process: the reference pass one step ahead
// serves two steps at once, whose time injection rounds differently from the one program's
// (docs/tuning.md, Z123_REFERENCE_STEPS), so a shared reference image made under the other
// schedule would not match bit for bit when every instance runs in one process.
const Image& reference_image(const Image& input, const Expectation& e) {
  static std::map<std::string, Image> by_schedule;
  const std::string key = e.reference_queue ? e.reference_queue : "";
  auto it = by_schedule.find(key);
  if (it == by_schedule.end())
    it = by_schedule.emplace(key, Engine::open(test::fast_model_dir(), tiny_options())->generate(input, quick()).image)
             .first;
  return it->second;
}

} // namespace

TEST_P(FaultInjection, EveryFailureIsAClearErrorAndTheEngineRecovers) {
  const Expectation e = GetParam();
  std::optional<test::ScopedEnv> queue;
  if (e.reference_queue) queue.emplace("Z123_REFERENCE_QUEUE", e.reference_queue);
  const Image input = load_image(test::golden_dir() / "pipeline_input.png");
  const Image& reference = reference_image(input, e); // made with Z123_REFERENCE_QUEUE as this test sets it
  const int fds = test::count_entries("/proc/self/fd");

  int failures = 0;
  for (uint64_t a = 1, b = 2, nth = 1; nth < 100000; nth = a + b, a = b, b = nth) { // 1 2 3 5 8 ...
    SCOPED_TRACE(std::string(fault_point_name(e.point)) + " failing at call " + std::to_string(a));
    arm_fault(e.point, a, /*sticky=*/e.point == FaultPoint::Submit || e.point == FaultPoint::Wait);
    bool failed = false;
    try {
      auto engine = Engine::open(test::fast_model_dir(), tiny_options(e.memory));
      const Image got = engine->generate(input, quick()).image;
      EXPECT_EQ(got.pixels, reference.pixels) << "no error, so the result must be right";
    } catch (const Error& err) {
      failed = true;
      ++failures;
      EXPECT_EQ(err.kind(), e.kind) << err.what();
      EXPECT_NE(std::string(err.what()).find(e.names), std::string::npos) << err.what();
    }
    disarm_faults();
    if (!failed) break; // this point is called fewer than `a` times in one open + generate
  }
  EXPECT_GE(failures, 1) << "the fault point was never reached";

  auto engine = Engine::open(test::fast_model_dir(), tiny_options(e.memory));
  EXPECT_EQ(engine->generate(input, quick()).image.pixels, reference.pixels);
  EXPECT_EQ(engine->validation_errors(), 0u);
  engine.reset();
  EXPECT_EQ(test::count_entries("/proc/self/fd"), fds) << "file descriptors leaked";
}

INSTANTIATE_TEST_SUITE_P(
    Points, FaultInjection,
    ::testing::Values(Expectation{FaultPoint::AllocateMemory, ErrorKind::OutOfMemory, "allocating"},
                      Expectation{FaultPoint::CreateBuffer, ErrorKind::OutOfMemory, "vkCreateBuffer"},
                      Expectation{FaultPoint::CreatePipeline, ErrorKind::OutOfMemory, "vkCreateComputePipelines"},
                      Expectation{FaultPoint::Submit, ErrorKind::Vulkan, "VK_ERROR_DEVICE_LOST"},
                      Expectation{FaultPoint::Wait, ErrorKind::Vulkan, "VK_ERROR_DEVICE_LOST"},
                      Expectation{FaultPoint::FileRead, ErrorKind::Io, "reading tensor"}),
    [](const ::testing::TestParamInfo<Expectation>& p) { return std::string(fault_point_name(p.param.point)); });

INSTANTIATE_TEST_SUITE_P(
    LowMemory, FaultInjection,
    ::testing::Values(Expectation{FaultPoint::AllocateMemory, ErrorKind::OutOfMemory, "allocating", "low"},
                      Expectation{FaultPoint::Submit, ErrorKind::Vulkan, "VK_ERROR_DEVICE_LOST", "low"},
                      Expectation{FaultPoint::Wait, ErrorKind::Vulkan, "VK_ERROR_DEVICE_LOST", "low"}),
    [](const ::testing::TestParamInfo<Expectation>& p) { return std::string(fault_point_name(p.param.point)); });

INSTANTIATE_TEST_SUITE_P(
    ReferenceAhead, FaultInjection,
    ::testing::Values(Expectation{FaultPoint::AllocateMemory, ErrorKind::OutOfMemory, "allocating", "auto", "shared"},
                      Expectation{FaultPoint::Submit, ErrorKind::Vulkan, "VK_ERROR_DEVICE_LOST", "auto", "shared"},
                      Expectation{FaultPoint::Wait, ErrorKind::Vulkan, "VK_ERROR_DEVICE_LOST", "auto", "shared"}),
    [](const ::testing::TestParamInfo<Expectation>& p) { return std::string(fault_point_name(p.param.point)); });
