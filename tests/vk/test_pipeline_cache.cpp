// The pipeline cache: pipelines are created once per variant + constants, and the driver cache is
// written under $XDG_CACHE_HOME keyed by device, driver and shader hash, then read back.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "support/vk_env.hpp"

using namespace z123;
namespace fs = std::filesystem;

class PipelineCacheTest : public test::VkTest {};

TEST_F(PipelineCacheTest, SamePipelineReturnedForSameKey) {
  auto& cache = device().pipelines();
  const vk::Pipeline& a = cache.get({"fill_u32", 1, 12, {64}});
  const vk::Pipeline& b = cache.get({"fill_u32", 1, 12, {64}});
  const vk::Pipeline& c = cache.get({"fill_u32", 1, 12, {32}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &c);
  EXPECT_TRUE(cache.has_shader("fill_u32"));
  EXPECT_FALSE(cache.has_shader("nonexistent"));
}

TEST_F(PipelineCacheTest, PersistsToXdgCacheHome) {
  fs::path dir = fs::temp_directory_path() / ("z123-cache-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const char* old = std::getenv("XDG_CACHE_HOME");
  std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  std::string path;
  {
    vk::Device dev(test::vk_instance(), device().info());
    path = dev.pipelines().file_path();
    dev.pipelines().get({"fill_u32", 1, 12, {64}});
  } // destruction saves
  EXPECT_EQ(fs::path(path).parent_path(), dir / "zero123pp-vk");
  ASSERT_TRUE(fs::exists(path)) << path;
  EXPECT_GT(fs::file_size(path), 0u);
  {
    vk::Device dev(test::vk_instance(), device().info()); // loads the file
    EXPECT_EQ(dev.pipelines().file_path(), path);
    dev.pipelines().get({"fill_u32", 1, 12, {64}});
  }
  // A corrupt cache file must not break start-up.
  { std::ofstream(path, std::ios::trunc) << "garbage"; }
  {
    vk::Device dev(test::vk_instance(), device().info());
    dev.pipelines().get({"fill_u32", 1, 12, {64}});
  }
  if (old)
    setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
  fs::remove_all(dir);
}
