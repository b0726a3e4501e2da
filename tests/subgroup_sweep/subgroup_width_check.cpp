// Compiled into each test binary the subgroup-width sweep runs (CMakeLists.txt here). With
// Z123_TEST_SUBGROUP set, the run stops before its first test unless the device it tests on
// (Z123_TEST_DEVICE) has subgroups of that width: a lavapipe that ignored LP_NATIVE_VECTOR_WIDTH
// would otherwise rerun the suite at its default 8 lanes and pass without testing anything new.
// A global environment rather than a test: it is not listed, so the three binaries' CTest
// entries do not share a name, and it needs no test filter to run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "z123/vk/instance.hpp"

namespace {

class SubgroupWidthCheck : public ::testing::Environment {
public:
  void SetUp() override {
    const char* want = std::getenv("Z123_TEST_SUBGROUP");
    if (!want || !*want) return;
    z123::vk::Instance instance(z123::vk::InstanceOptions{});
    const char* sel = std::getenv("Z123_TEST_DEVICE");
    const z123::vk::DeviceInfo& info = z123::vk::choose_device(instance, sel ? sel : "");
    ASSERT_EQ(std::to_string(info.subgroup_size), std::string(want))
        << "Z123_TEST_SUBGROUP asks for " << want << "-wide subgroups, but '" << info.name << "' runs "
        << info.subgroup_size << " (lavapipe takes its width from LP_NATIVE_VECTOR_WIDTH, 32 bits a lane, 512 at most)";
  }
};

const ::testing::Environment* const kCheck = ::testing::AddGlobalTestEnvironment(new SubgroupWidthCheck);

} // namespace
