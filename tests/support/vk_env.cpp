#include "support/vk_env.hpp"

#include <chrono>
#include <cstdlib>

namespace z123::test {
namespace {

struct Context {
  std::unique_ptr<vk::Instance> instance;
  std::unique_ptr<vk::Device> device;
};

Context& context() {
  static Context ctx = [] {
    Context c;
    vk::InstanceOptions opts;
    opts.validation = true;
    c.instance = std::make_unique<vk::Instance>(opts);
    const char* sel = std::getenv("Z123_TEST_DEVICE");
    const vk::DeviceInfo& info = vk::choose_device(*c.instance, sel ? sel : "");
    c.device = std::make_unique<vk::Device>(*c.instance, info);
    return c;
  }();
  return ctx;
}

} // namespace

vk::Instance& vk_instance() { return *context().instance; }
vk::Device& vk_device() { return *context().device; }

void VkTest::SetUp() { errors_before_ = vk_instance().validation_error_count(); }

void VkTest::TearDown() {
  uint32_t now = vk_instance().validation_error_count();
  if (now != errors_before_) {
    std::string all;
    for (const auto& m : vk_instance().validation_messages()) all += m + "\n";
    ADD_FAILURE() << (now - errors_before_) << " Vulkan validation error(s) during this test:\n" << all;
  }
}

uint64_t test_seed() {
  if (const char* s = std::getenv("Z123_TEST_SEED"); s && *s) return std::strtoull(s, nullptr, 0);
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

} // namespace z123::test
