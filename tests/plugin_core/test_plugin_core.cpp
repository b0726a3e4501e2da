// The plug-ins' C API (gimp-plugin/core/zero123pp_plugin.h) on lavapipe: a generation through it
// gives the bytes of z123::Engine::generate for the same input and seed; a poll that asks to stop
// after step 1 ends the call with CANCELLED and no buffer; a missing or broken model folder, an
// unknown device and a too-small image give their status with the engine's own message (the
// words the command line prints); the views' names, poses JSON and tilings are the engine's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "support/golden.hpp"
#include "support/synthetic_model.hpp"
#include "z123/engine.hpp"
#include "z123/image/codec.hpp"
#include "z123/views.hpp"
#include "zero123pp_plugin.h"

namespace fs = std::filesystem;
using namespace z123;

namespace {

std::string test_device() {
  const char* d = std::getenv("Z123_TEST_DEVICE");
  return d ? d : "";
}

// The message a failed call left, freed.
std::string take(char* message) {
  std::string s = message ? message : "";
  z123p_free(message);
  return s;
}

// The fast synthetic model (64 px VAE branch) at 128 x 192: the API's plumbing, not the numbers.
z123p_generate_options quick_options() {
  z123p_generate_options o;
  z123p_generate_options_init(&o);
  o.steps = 1;
  o.seed = 7;
  o.width = 128;
  o.height = 192;
  return o;
}

struct Counters {
  int steps_seen = 0, polls = 0, load_stages = 0;
};

z123p_model* open_fast(Counters* counters = nullptr) {
  z123p_model* model = nullptr;
  char* message = nullptr;
  auto on_load = [](const char*, int, int, void* user) {
    if (user) ++static_cast<Counters*>(user)->load_stages;
  };
  z123p_status s =
      z123p_open(test::fast_model_dir().c_str(), test_device().c_str(), on_load, counters, &model, &message);
  EXPECT_EQ(s, Z123P_OK) << take(message);
  return model;
}

} // namespace

TEST(PluginCore, GenerateGivesTheEngineBytesAndReportsEachStep) {
  const Image input = load_image(test::golden_dir() / "pipeline_input.png");
  Counters counters;
  z123p_model* model = open_fast(&counters);
  ASSERT_NE(model, nullptr);
  EXPECT_GT(counters.load_stages, 0);
  EXPECT_STRNE(z123p_device_name(model), "");

  z123p_generate_options o = quick_options();
  o.steps = 2;
  o.user = &counters;
  o.on_step = [](int step, int total, void* user) {
    auto* c = static_cast<Counters*>(user);
    EXPECT_EQ(step, c->steps_seen + 1);
    EXPECT_EQ(total, 2);
    c->steps_seen = step;
  };
  o.poll = [](void* user) {
    ++static_cast<Counters*>(user)->polls;
    return 0;
  };
  uint8_t* rgba = nullptr;
  char* message = nullptr;
  z123p_status s = z123p_generate(model, input.pixels.data(), input.width, input.height, input.width * input.channels,
                                  input.channels, "pipeline_input.png", &o, &rgba, &message);
  ASSERT_EQ(s, Z123P_OK) << take(message);
  EXPECT_EQ(counters.steps_seen, 2);
  z123p_close(model);

  EngineOptions eo;
  eo.device = test_device();
  auto engine = Engine::open(test::fast_model_dir(), eo);
  GenerateOptions go;
  go.steps = 2, go.seed = 7, go.width = 128, go.height = 192;
  const Image grid = engine->generate(input, go).image;
  ASSERT_EQ(grid.pixels.size(), size_t{128} * 192 * 4);
  EXPECT_EQ(std::vector<uint8_t>(rgba, rgba + grid.pixels.size()), grid.pixels);

  // Every tiling is the engine's tiled() of that grid.
  for (int t = 0; t < Z123P_TILING_COUNT; ++t) {
    int w = 0, h = 0;
    uint8_t* tiled_rgba = z123p_tile(rgba, 128, 192, t, &w, &h);
    ASSERT_NE(tiled_rgba, nullptr);
    const Image expect = tiled(grid, static_cast<Tiling>(t));
    EXPECT_EQ(w, expect.width);
    EXPECT_EQ(h, expect.height);
    EXPECT_EQ(std::vector<uint8_t>(tiled_rgba, tiled_rgba + expect.pixels.size()), expect.pixels) << t;
    z123p_free(tiled_rgba);
  }
  EXPECT_EQ(z123p_tile(rgba, 128, 192, Z123P_TILING_COUNT, nullptr, nullptr), nullptr);
  z123p_free(rgba);
}

TEST(PluginCore, APollThatAsksToStopAfterStepOneCancels) {
  const Image input = load_image(test::golden_dir() / "pipeline_input.png");
  z123p_model* model = open_fast();
  ASSERT_NE(model, nullptr);
  Counters counters;
  z123p_generate_options o = quick_options();
  o.steps = 3;
  o.user = &counters;
  o.on_step = [](int step, int, void* user) { static_cast<Counters*>(user)->steps_seen = step; };
  o.poll = [](void* user) { return static_cast<Counters*>(user)->steps_seen >= 1 ? 1 : 0; };
  uint8_t* rgba = nullptr;
  char* message = nullptr;
  z123p_status s = z123p_generate(model, input.pixels.data(), input.width, input.height, input.width * input.channels,
                                  input.channels, "input", &o, &rgba, &message);
  const std::string said = take(message); // taken either way: a cancelled call has a message too
  EXPECT_EQ(s, Z123P_CANCELLED) << said;
  EXPECT_EQ(rgba, nullptr);
  // Stopped before the next step: at most one more step ran after the poll saw step 1.
  EXPECT_GE(counters.steps_seen, 1);
  EXPECT_LE(counters.steps_seen, 2);
  // The model is still usable.
  o.poll = nullptr;
  o.steps = 1;
  s = z123p_generate(model, input.pixels.data(), input.width, input.height, input.width * input.channels,
                     input.channels, "input", &o, &rgba, &message);
  EXPECT_EQ(s, Z123P_OK) << take(message);
  z123p_free(rgba);
  z123p_close(model);
}

TEST(PluginCore, BadModelsAndDevicesGiveTheirStatusWithTheEngineWords) {
  test::TempDir tmp("z123-plugin-core");
  // The engine's own message for the same folder: what the command line prints after "zero123pp: ".
  auto engine_words = [](const fs::path& dir, const std::string& device) {
    try {
      EngineOptions eo;
      eo.device = device;
      Engine::open(dir, eo);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(opened)");
  };
  const fs::path missing = tmp.path() / "nomodel";
  z123p_model* model = nullptr;
  char* message = nullptr;
  EXPECT_EQ(z123p_open(missing.c_str(), test_device().c_str(), nullptr, nullptr, &model, &message), Z123P_BAD_MODEL);
  EXPECT_EQ(model, nullptr);
  const std::string said = take(message);
  EXPECT_EQ(said, engine_words(missing, test_device()));
  EXPECT_NE(said.find("nomodel"), std::string::npos) << said;

  const fs::path broken = tmp.path() / "broken-model";
  fs::copy(test::tiny_model_dir(), broken, fs::copy_options::recursive);
  const fs::path w = broken / "unet" / "diffusion_pytorch_model.safetensors";
  fs::resize_file(w, fs::file_size(w) / 2);
  EXPECT_EQ(z123p_open(broken.c_str(), test_device().c_str(), nullptr, nullptr, &model, &message), Z123P_BAD_MODEL);
  const std::string broken_said = take(message);
  EXPECT_EQ(broken_said, engine_words(broken, test_device()));
  EXPECT_NE(broken_said.find("diffusion_pytorch_model.safetensors"), std::string::npos) << broken_said;

  EXPECT_EQ(z123p_open(test::fast_model_dir().c_str(), "no-such-device", nullptr, nullptr, &model, &message),
            Z123P_NO_DEVICE);
  EXPECT_NE(take(message).find("no Vulkan device name contains 'no-such-device'"), std::string::npos);
  EXPECT_EQ(z123p_open("", nullptr, nullptr, nullptr, &model, &message), Z123P_BAD_MODEL);
  take(message);
}

TEST(PluginCore, SmallImagesAndBadOptionsAreBadInputBeforeAnyModel) {
  z123p_generate_options o;
  z123p_generate_options_init(&o);
  char* message = nullptr;
  EXPECT_EQ(z123p_check(640, 480, &o, "layer 'x'", &message), Z123P_OK);
  EXPECT_EQ(z123p_check(4, 100, &o, "layer 'x'", &message), Z123P_BAD_INPUT);
  const std::string said = take(message);
  // check_input_image's words, as the command line prints them for a 4x100 file.
  try {
    check_input_image(Image::blank(4, 100, 4), "layer 'x'");
  } catch (const Error& e) {
    EXPECT_EQ(said, e.what());
  }
  EXPECT_NE(said.find("at least 8 pixels"), std::string::npos) << said;
  o.steps = 0;
  EXPECT_EQ(z123p_check(640, 480, &o, "layer", &message), Z123P_BAD_INPUT);
  EXPECT_NE(take(message).find("steps must be between 1 and 200"), std::string::npos);
}

TEST(PluginCore, ViewsNamesAndPosesAreTheEngines) {
  char* label = z123p_view_label(0);
  EXPECT_STREQ(label, "View 1: azimuth 30\xC2\xB0, elevation 20\xC2\xB0");
  z123p_free(label);
  label = z123p_view_label(5);
  EXPECT_STREQ(label, "View 6: azimuth 330\xC2\xB0, elevation -10\xC2\xB0");
  z123p_free(label);
  EXPECT_EQ(z123p_view_label(6), nullptr);
  char* json = z123p_views_json("cube");
  EXPECT_EQ(std::string(json), views_json("cube"));
  EXPECT_NE(std::string(json).find("\"file\": \"cube_view5.png\""), std::string::npos);
  z123p_free(json);
  int x, y, w, h;
  ASSERT_TRUE(z123p_view_rect(3, 640, 960, &x, &y, &w, &h));
  EXPECT_EQ(x, 320);
  EXPECT_EQ(y, 320);
  EXPECT_EQ(w, 320);
  EXPECT_EQ(h, 320);
  double az, el, fov;
  ASSERT_TRUE(z123p_view_pose(1, &az, &el, &fov));
  EXPECT_EQ(az, 90);
  EXPECT_EQ(el, -10);
  EXPECT_EQ(fov, 30);
  EXPECT_STREQ(z123p_tiling_name(Z123P_TILING_6X1), "6x1");
  int columns = 0, rows = 0;
  EXPECT_TRUE(z123p_tiling_layout(Z123P_TILING_3X2, &columns, &rows));
  EXPECT_EQ(columns, 3);
  EXPECT_EQ(rows, 2);
  char** names = nullptr;
  char* message = nullptr;
  EXPECT_EQ(z123p_list_devices(&names, &message), Z123P_OK) << take(message);
  ASSERT_NE(names, nullptr);
  EXPECT_NE(names[0], nullptr); // lavapipe at least
  z123p_free_list(names);
}

// The poses JSON is the bytes `zero123pp --views-dir` wrote before it moved into the engine (the
// CLI, the GIMP parasite and tests/gimp compare against it).
TEST(PluginCore, ViewsJsonKeepsTheCommandLinesBytes) {
  EXPECT_EQ(views_json("cube"),
            "{\n  \"image\": \"cube.png\",\n  \"views\": [\n"
            "    {\"index\": 0, \"file\": \"cube_view0.png\", \"row\": 0, \"column\": 0, \"azimuth_deg\": 30, "
            "\"elevation_deg\": 20, \"fov_deg\": 30},\n"
            "    {\"index\": 1, \"file\": \"cube_view1.png\", \"row\": 0, \"column\": 1, \"azimuth_deg\": 90, "
            "\"elevation_deg\": -10, \"fov_deg\": 30},\n"
            "    {\"index\": 2, \"file\": \"cube_view2.png\", \"row\": 1, \"column\": 0, \"azimuth_deg\": 150, "
            "\"elevation_deg\": 20, \"fov_deg\": 30},\n"
            "    {\"index\": 3, \"file\": \"cube_view3.png\", \"row\": 1, \"column\": 1, \"azimuth_deg\": 210, "
            "\"elevation_deg\": -10, \"fov_deg\": 30},\n"
            "    {\"index\": 4, \"file\": \"cube_view4.png\", \"row\": 2, \"column\": 0, \"azimuth_deg\": 270, "
            "\"elevation_deg\": 20, \"fov_deg\": 30},\n"
            "    {\"index\": 5, \"file\": \"cube_view5.png\", \"row\": 2, \"column\": 1, \"azimuth_deg\": 330, "
            "\"elevation_deg\": -10, \"fov_deg\": 30}\n"
            "  ]\n}\n");
  // A long name is not cut (the old fixed 256-byte line buffer would have).
  const std::string long_name(300, 'x');
  EXPECT_NE(views_json(long_name).find("\"file\": \"" + long_name + "_view5.png\""), std::string::npos);
}
