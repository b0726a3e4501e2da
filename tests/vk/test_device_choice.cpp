// Device listing and selection: the real list on this machine, and the selection rules on
// synthetic lists (discrete > integrated > virtual > CPU, index, name substring, errors).
#include <gtest/gtest.h>

#include "support/vk_env.hpp"
#include "z123/error.hpp"
#include "z123/vk/device.hpp"
#include "z123/vk/instance.hpp"

using namespace z123;

namespace {

vk::DeviceInfo fake(uint32_t index, const char* name, VkPhysicalDeviceType type, uint64_t mem = 0) {
  vk::DeviceInfo d;
  d.index = index;
  d.name = name;
  d.type = type;
  d.device_local_bytes = mem;
  return d;
}

} // namespace

TEST(DeviceChoice, ListsAtLeastOneDeviceWithCompute) {
  const auto& devs = test::vk_instance().devices();
  ASSERT_FALSE(devs.empty());
  for (const auto& d : devs) {
    EXPECT_TRUE(d.has_compute_queue);
    EXPECT_FALSE(d.name.empty());
    EXPECT_GE(d.api_version, VK_API_VERSION_1_2);
    EXPECT_GT(d.max_storage_buffer_range, 0u);
    std::string text = vk::describe_device(d);
    EXPECT_NE(text.find(d.name), std::string::npos);
    EXPECT_NE(text.find("cooperative matrix"), std::string::npos);
  }
}

TEST(DeviceChoice, LavapipeLimitsAreSeen) {
  for (const auto& d : test::vk_instance().devices()) {
    if (d.name.find("llvmpipe") == std::string::npos) continue;
    EXPECT_EQ(d.type, VK_PHYSICAL_DEVICE_TYPE_CPU);
    EXPECT_EQ(d.max_storage_buffer_range, 128ull << 20);
    EXPECT_EQ(d.subgroup_size, 8u);
    EXPECT_TRUE(d.maintenance4);
    return;
  }
  GTEST_SKIP() << "no lavapipe device on this machine";
}

// Every kernel family needs basic, arithmetic (norms) and shuffle (attention) subgroup operations
// in compute shaders: a device without them is refused when it is opened, naming what it lacks.
TEST(DeviceChoice, SubgroupOperationsTheKernelsNeed) {
  for (const auto& d : test::vk_instance().devices()) EXPECT_EQ(vk::missing_subgroup_operations(d), "") << d.name;
  vk::DeviceInfo d = test::vk_instance().devices().front();
  d.compute_subgroup_operations &= ~uint32_t{VK_SUBGROUP_FEATURE_SHUFFLE_BIT};
  EXPECT_EQ(vk::missing_subgroup_operations(d), "shuffle");
  d.compute_subgroup_operations = 0;
  EXPECT_EQ(vk::missing_subgroup_operations(d), "basic, arithmetic, shuffle");
  EXPECT_NE(vk::describe_device(d).find("unusable: lacks subgroup operations"), std::string::npos)
      << vk::describe_device(d);
  try {
    vk::Device device(test::vk_instance(), d, {});
    ADD_FAILURE() << "a device without subgroup operations was opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("lacks subgroup operations the kernels use in compute shaders: basic, "
                                         "arithmetic, shuffle"),
              std::string::npos)
        << e.what();
  }
}

// The default choice passes over a device the kernels cannot run on, whatever its kind.
TEST(DeviceChoice, DefaultChoiceSkipsADeviceWithoutTheSubgroupOperations) {
  const uint32_t all =
      VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  std::vector<vk::DeviceInfo> devs = {fake(0, "old discrete", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, 8ull << 30),
                                      fake(1, "llvmpipe", VK_PHYSICAL_DEVICE_TYPE_CPU)};
  devs[0].compute_subgroup_operations = VK_SUBGROUP_FEATURE_BASIC_BIT;
  devs[1].compute_subgroup_operations = all;
  EXPECT_EQ(vk::choose_device(devs, "").name, "llvmpipe");
  devs[0].compute_subgroup_operations = all;
  EXPECT_EQ(vk::choose_device(devs, "").name, "old discrete");
}

TEST(DeviceChoice, DefaultOrderPrefersDiscreteThenIntegratedThenVirtualThenCpu) {
  std::vector<vk::DeviceInfo> devs = {fake(0, "llvmpipe", VK_PHYSICAL_DEVICE_TYPE_CPU),
                                      fake(1, "Intel iGPU", VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU),
                                      fake(2, "NVIDIA H100", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU),
                                      fake(3, "virtio", VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU)};
  EXPECT_EQ(vk::choose_device(devs, "").index, 2u);
  EXPECT_EQ(vk::choose_device(devs, "auto").index, 2u);
  devs.erase(devs.begin() + 2);
  EXPECT_EQ(vk::choose_device(devs, "").name, "Intel iGPU");
  devs.erase(devs.begin() + 1);
  EXPECT_EQ(vk::choose_device(devs, "").name, "virtio");
}

TEST(DeviceChoice, TiesBrokenByDeviceMemory) {
  std::vector<vk::DeviceInfo> devs = {fake(0, "small", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, 4ull << 30),
                                      fake(1, "big", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, 80ull << 30)};
  EXPECT_EQ(vk::choose_device(devs, "").name, "big");
}

TEST(DeviceChoice, ByIndexAndByCaseInsensitiveName) {
  std::vector<vk::DeviceInfo> devs = {fake(0, "llvmpipe (LLVM 15)", VK_PHYSICAL_DEVICE_TYPE_CPU),
                                      fake(1, "NVIDIA H100 80GB HBM3", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU)};
  EXPECT_EQ(vk::choose_device(devs, "0").index, 0u);
  EXPECT_EQ(vk::choose_device(devs, "1").index, 1u);
  EXPECT_EQ(vk::choose_device(devs, "h100").index, 1u);
  EXPECT_EQ(vk::choose_device(devs, "LLVMPIPE").index, 0u);
}

TEST(DeviceChoice, BadSelectorsNameTheDevicesThatExist) {
  std::vector<vk::DeviceInfo> devs = {fake(0, "llvmpipe", VK_PHYSICAL_DEVICE_TYPE_CPU)};
  try {
    vk::choose_device(devs, "7");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NoDevice); // "no such device" to the user (the plug-ins' status)
    EXPECT_NE(std::string(e.what()).find("index 7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0: llvmpipe"), std::string::npos) << e.what();
  }
  // An index too long for an unsigned long is the same clear error, not std::out_of_range.
  for (const char* huge : {"99999999999999999999999", "4294967296"}) {
    try {
      vk::choose_device(devs, huge);
      FAIL() << "expected an error for " << huge;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::NoDevice);
      EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
    }
  }
  try {
    vk::choose_device(devs, "radeon");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NoDevice);
    EXPECT_NE(std::string(e.what()).find("'radeon'"), std::string::npos) << e.what();
  }
  std::vector<vk::DeviceInfo> none;
  try {
    vk::choose_device(none, "");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NoDevice);
  }
}
