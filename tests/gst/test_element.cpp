// The zero123pp element inside GStreamer, on the bundled tiny model (lavapipe in CI, where one
// frame at view-size 64 with 1 step takes ~25 s on an idle 2-core machine, more under load):
// gst-inspect documents it; caps are checked and refused; model and device problems fail the
// READY->PAUSED change with an element error; a non-live appsrc pipeline gets every frame, with
// the engine's own pixels, the input timestamps, progress messages and pose meta; a live source
// never blocks, drops are reported with QoS, and PLAYING->NULL mid-generation returns after at
// most one step. Flushes: test_flush.cpp; state cycles and leaks: test_states.cpp.
#include <gtest/gtest.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "element_util.hpp"
#include "gst_env.hpp"
#include "support/golden.hpp"
#include "z123/engine.hpp"
#include "z123/image/codec.hpp"
#include "z123/image/preprocess.hpp"

namespace fs = std::filesystem;
using namespace z123;
using namespace z123::test;

namespace {

// Tries READY->PAUSED with `model` / `device` and returns the error message text ("" if none).
std::string start_error(const std::string& model, const std::string& device) {
  GstElement* e = make_element();
  g_object_set(e, "model", model.c_str(), "device", device.c_str(), nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  EXPECT_EQ(gst_element_set_state(e, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  auto errors = test::pop_messages(bus, GST_MESSAGE_ERROR);
  std::string text = errors.empty() ? "" : error_text(errors[0]);
  EXPECT_EQ(errors.size(), 1u) << text;
  test::unref_messages(errors);
  EXPECT_EQ(gst_element_set_state(e, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gst_object_unref(bus);
  gst_object_unref(e);
  EXPECT_EQ(test::live_engines(), 0);
  return text;
}

fs::path temp_dir() {
  static fs::path d = [] {
    fs::path p = fs::temp_directory_path() / ("z123-gst-" + std::to_string(::getpid()));
    fs::create_directories(p);
    return p;
  }();
  return d;
}

} // namespace

TEST(GstInspect, DocumentsEveryProperty) {
  test::init_gstreamer();
  FILE* p = popen("gst-inspect-1.0 zero123pp 2>&1", "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  EXPECT_EQ(pclose(p), 0) << out;
  for (const char* prop : {"model", "device", "precision", "steps", "guidance-scale", "seed", "random-seed", "sampler",
                           "timestep-spacing", "view-size", "tiling", "drop-policy", "memory"})
    EXPECT_NE(out.find(std::string("  ") + prop + " "), std::string::npos) << prop << "\n" << out;
  for (const char* word : {"Filter/Effect/Video", "keep-newest", "euler_a", "6x1", "GRAY8"})
    EXPECT_NE(out.find(word), std::string::npos) << word;
}

TEST(GstCaps, SinkRefusesUnsupportedFormatsAndSrcFollowsViewSizeAndTiling) {
  GstElement* e = make_element();
  ASSERT_NE(e, nullptr);
  GstPad* sink = gst_element_get_static_pad(e, "sink");
  GstPad* src = gst_element_get_static_pad(e, "src");
  auto accepts = [&](const char* caps_str) {
    GstCaps* caps = gst_caps_from_string(caps_str);
    bool ok = gst_pad_query_accept_caps(sink, caps);
    gst_caps_unref(caps);
    return ok;
  };
  EXPECT_TRUE(accepts(kInputCaps));
  EXPECT_TRUE(accepts("video/x-raw,format=GRAY8,width=1,height=1,framerate=0/1"));
  EXPECT_TRUE(accepts("video/x-raw,format=BGRx,width=16384,height=3,framerate=60/1"));
  EXPECT_FALSE(accepts("video/x-raw,format=I420,width=64,height=64,framerate=30/1"));
  EXPECT_FALSE(accepts("video/x-raw,format=RGB,width=16385,height=64,framerate=30/1"));
  EXPECT_FALSE(accepts("audio/x-raw,format=S16LE,rate=48000,channels=1"));

  auto src_size = [&] {
    GstCaps* caps = gst_pad_query_caps(src, nullptr);
    const GstStructure* s = gst_caps_get_structure(caps, 0);
    int w = 0, h = 0;
    gst_structure_get_int(s, "width", &w);
    gst_structure_get_int(s, "height", &h);
    EXPECT_STREQ(gst_structure_get_string(s, "format"), "RGBA");
    gst_caps_unref(caps);
    return std::to_string(w) + "x" + std::to_string(h);
  };
  EXPECT_EQ(src_size(), "128x192");
  for (auto [tiling, size] : {std::pair{"3x2", "192x128"}, {"6x1", "384x64"}, {"1x6", "64x384"}}) {
    gst_util_set_object_arg(G_OBJECT(e), "tiling", tiling);
    EXPECT_EQ(src_size(), size) << tiling;
  }
  g_object_set(e, "view-size", 100, nullptr); // rounded down to a multiple of 64
  int view = 0;
  g_object_get(e, "view-size", &view, nullptr);
  EXPECT_EQ(view, 64);

  // Linking a source that can only give I420 fails at negotiation time.
  GstElement* bin = gst_bin_new(nullptr);
  GstElement* testsrc = gst_element_factory_make("videotestsrc", nullptr);
  gst_bin_add_many(GST_BIN(bin), testsrc, e, nullptr);
  GstCaps* i420 = gst_caps_from_string("video/x-raw,format=I420");
  EXPECT_FALSE(gst_element_link_filtered(testsrc, e, i420));
  GstCaps* rgb = gst_caps_from_string("video/x-raw,format=RGB");
  EXPECT_TRUE(gst_element_link_filtered(testsrc, e, rgb));
  gst_caps_unref(i420);
  gst_caps_unref(rgb);
  gst_object_unref(sink);
  gst_object_unref(src);
  gst_object_unref(bin);
}

TEST(GstErrors, MissingModelFailsTheStateChangeWithAnError) {
  std::string missing = (temp_dir() / "no-such-model").string();
  std::string text = start_error(missing, test::test_device());
  EXPECT_NE(text.find("no-such-model"), std::string::npos) << text;
}

TEST(GstErrors, BrokenModelFailsTheStateChangeWithAnError) {
  fs::path broken = temp_dir() / "broken-model";
  fs::remove_all(broken);
  fs::copy(test::tiny_model_dir(), broken, fs::copy_options::recursive);
  fs::path w = broken / "unet" / "diffusion_pytorch_model.safetensors";
  fs::resize_file(w, fs::file_size(w) / 2);
  std::string text = start_error(broken.string(), test::test_device());
  EXPECT_NE(text.find("diffusion_pytorch_model.safetensors"), std::string::npos) << text;
}

TEST(GstErrors, UnknownDeviceFailsTheStateChangeWithAnError) {
  std::string text = start_error(test::tiny_model_dir().string(), "no-such-vulkan-device");
  EXPECT_NE(text.find("Vulkan device"), std::string::npos) << text;
}

// Progress messages (code "load") while the model opens: START, one CONTINUE per stage with a
// rising percent, then COMPLETE; a failed open ends with an ERROR one.
namespace {
struct LoadProgressSeen {
  std::vector<GstProgressType> types;
  std::vector<int> percents;
  std::string last_text;
};
LoadProgressSeen load_progress(GstBus* bus) {
  LoadProgressSeen seen;
  for (GstMessage* m : test::pop_messages(bus, GST_MESSAGE_PROGRESS)) {
    GstProgressType type;
    gchar *code = nullptr, *text = nullptr;
    gst_message_parse_progress(m, &type, &code, &text);
    EXPECT_STREQ(code, "load");
    int percent = -1;
    EXPECT_TRUE(gst_structure_get_int(gst_message_get_structure(m), "percent", &percent));
    seen.types.push_back(type);
    seen.percents.push_back(percent);
    seen.last_text = text ? text : "";
    g_free(code);
    g_free(text);
    gst_message_unref(m);
  }
  return seen;
}
} // namespace

TEST(GstProgress, LoadingTheModelPostsProgressMessages) {
  GstElement* e = make_element();
  set_fast_properties(e);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  ASSERT_NE(gst_element_set_state(e, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  LoadProgressSeen seen = load_progress(bus);
  ASSERT_GE(seen.types.size(), 4u);
  EXPECT_EQ(seen.types.front(), GST_PROGRESS_TYPE_START);
  EXPECT_EQ(seen.types.back(), GST_PROGRESS_TYPE_COMPLETE);
  for (size_t i = 1; i + 1 < seen.types.size(); ++i) {
    EXPECT_EQ(seen.types[i], GST_PROGRESS_TYPE_CONTINUE);
    EXPECT_GE(seen.percents[i], seen.percents[i - 1]);
  }
  EXPECT_EQ(seen.percents.back(), 100);
  EXPECT_EQ(gst_element_set_state(e, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);

  g_object_set(e, "model", (temp_dir() / "no-such-model").c_str(), nullptr);
  EXPECT_EQ(gst_element_set_state(e, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  seen = load_progress(bus);
  ASSERT_FALSE(seen.types.empty());
  EXPECT_EQ(seen.types.back(), GST_PROGRESS_TYPE_ERROR);
  EXPECT_NE(seen.last_text.find("no-such-model"), std::string::npos) << seen.last_text;
  auto errors = test::pop_messages(bus, GST_MESSAGE_ERROR);
  test::unref_messages(errors);
  EXPECT_EQ(gst_element_set_state(e, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gst_object_unref(bus);
  gst_object_unref(e);
}

// appsrc (not live) -> zero123pp -> appsink: both frames come out, nothing dropped.
TEST(GstNonLive, EveryFrameWithTheEnginesPixelsTimestampsProgressAndPoses) {
  test::init_gstreamer();
  GError* err = nullptr;
  GstElement* pipe = gst_parse_launch(
      "appsrc name=src is-live=false format=time ! zero123pp name=z ! appsink name=sink sync=false", &err);
  ASSERT_NE(pipe, nullptr) << (err ? err->message : "");
  GstElement* z = gst_bin_get_by_name(GST_BIN(pipe), "z");
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipe), "src");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipe), "sink");
  set_fast_properties(z);
  GstCaps* caps = gst_caps_from_string(kInputCaps);
  gst_app_src_set_caps(GST_APP_SRC(src), caps);
  gst_caps_unref(caps);
  ASSERT_NE(gst_element_set_state(pipe, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);

  const Image input = input_image();
  const GstClockTime pts[2] = {0, GST_SECOND}, dur = GST_SECOND;
  for (GstClockTime t : pts)
    ASSERT_EQ(gst_app_src_push_buffer(GST_APP_SRC(src), make_buffer(input, t, dur)), GST_FLOW_OK);
  ASSERT_EQ(gst_app_src_end_of_stream(GST_APP_SRC(src)), GST_FLOW_OK);

  std::vector<GstSample*> samples;
  for (int i = 0; i < 2; ++i) {
    GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 300 * GST_SECOND);
    ASSERT_NE(s, nullptr) << "frame " << i << " did not come out";
    samples.push_back(s);
  }
  EXPECT_EQ(gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 30 * GST_SECOND), nullptr);
  EXPECT_TRUE(gst_app_sink_is_eos(GST_APP_SINK(sink)));
  GstBus* bus = gst_element_get_bus(pipe);
  auto messages =
      test::pop_messages(bus, static_cast<GstMessageType>(GST_MESSAGE_ELEMENT | GST_MESSAGE_QOS | GST_MESSAGE_ERROR));
  ASSERT_EQ(gst_element_set_state(pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  EXPECT_EQ(test::live_engines(), 0);

  // The engine itself, same options: the element must give exactly its bytes.
  EngineOptions eo;
  eo.device = test::test_device();
  GenerateOptions go;
  go.steps = 1;
  go.seed = kSeed;
  go.width = 2 * kViewSize;
  go.height = 3 * kViewSize;
  const Image want = Engine::open(test::fast_model_dir(), eo)->generate(input, go).image;

  for (size_t i = 0; i < samples.size(); ++i) {
    GstVideoInfo info;
    ASSERT_TRUE(gst_video_info_from_caps(&info, gst_sample_get_caps(samples[i])));
    EXPECT_EQ(GST_VIDEO_INFO_FORMAT(&info), GST_VIDEO_FORMAT_RGBA);
    EXPECT_EQ(GST_VIDEO_INFO_WIDTH(&info), 128);
    EXPECT_EQ(GST_VIDEO_INFO_HEIGHT(&info), 192);
    GstBuffer* b = gst_sample_get_buffer(samples[i]);
    EXPECT_EQ(GST_BUFFER_PTS(b), pts[i]);
    EXPECT_EQ(GST_BUFFER_DTS(b), pts[i]);
    EXPECT_EQ(GST_BUFFER_DURATION(b), dur);
    GstMapInfo map;
    ASSERT_TRUE(gst_buffer_map(b, &map, GST_MAP_READ));
    ASSERT_EQ(map.size, want.pixels.size());
    EXPECT_EQ(std::memcmp(map.data, want.pixels.data(), map.size), 0) << "frame " << i << " differs from the engine";
    gst_buffer_unmap(b, &map);

    GstCustomMeta* meta = gst_buffer_get_custom_meta(b, "Zero123ppPosesMeta");
    ASSERT_NE(meta, nullptr);
    const GstStructure* s = gst_custom_meta_get_structure(meta);
    const GValue* az = gst_structure_get_value(s, "azimuth-deg");
    ASSERT_NE(az, nullptr);
    ASSERT_EQ(gst_value_array_get_size(az), 6u);
    EXPECT_FLOAT_EQ(g_value_get_float(gst_value_array_get_value(az, 0)), view_poses()[0].azimuth_deg);
    guint64 seed = 0;
    EXPECT_TRUE(gst_structure_get_uint64(s, "seed", &seed));
    EXPECT_EQ(seed, kSeed);
    gst_sample_unref(samples[i]);
  }

  // One progress message per step of each frame (1 step here), naming the frame; no drops.
  std::vector<GstClockTime> progress;
  for (GstMessage* m : messages) {
    EXPECT_NE(GST_MESSAGE_TYPE(m), GST_MESSAGE_ERROR) << error_text(m);
    EXPECT_NE(GST_MESSAGE_TYPE(m), GST_MESSAGE_QOS) << "a frame was dropped from a non-live source";
    if (GST_MESSAGE_TYPE(m) != GST_MESSAGE_ELEMENT || !is_progress(m)) continue;
    const GstStructure* s = gst_message_get_structure(m);
    guint64 ts = 0;
    int step = 0, total = 0;
    EXPECT_TRUE(gst_structure_get_uint64(s, "timestamp", &ts));
    EXPECT_TRUE(gst_structure_get_int(s, "step", &step));
    EXPECT_TRUE(gst_structure_get_int(s, "total", &total));
    EXPECT_EQ(step, 1);
    EXPECT_EQ(total, 1);
    progress.push_back(ts);
  }
  EXPECT_EQ(progress, (std::vector<GstClockTime>{pts[0], pts[1]}));
  test::unref_messages(messages);
  gst_object_unref(bus);
  gst_object_unref(z);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipe);
}

// GstHarness answers the latency query as a live source. Frames pushed while one generates
// return at once; all but the newest waiting one are dropped with QoS; stopping mid-generation
// waits at most for the step in flight, not for the remaining ones.
TEST(GstLive, DropsWithQosAndStopsWithinAStep) {
  GstElement* e = make_element();
  ASSERT_NE(e, nullptr);
  g_object_set(e, "steps", 200, nullptr); // far more than the test waits for
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  GstHarness* h = gst_harness_new_with_element(e, "sink", "src"); // PLAYING: the model loads here
  ASSERT_EQ(test::live_engines(), 1);
  gst_harness_set_src_caps_str(h, kInputCaps);
  const Image input = input_image();
  const GstClockTime frame = GST_SECOND / 30;

  auto t0 = Clock::now();
  ASSERT_EQ(gst_harness_push(h, make_buffer(input, 0, frame)), GST_FLOW_OK);
  GstMessage* first = gst_bus_timed_pop_filtered(bus, 600 * GST_SECOND, GST_MESSAGE_ELEMENT);
  ASSERT_NE(first, nullptr) << "no progress message";
  EXPECT_TRUE(is_progress(first));
  gst_message_unref(first);
  const double to_first_step = seconds_since(t0); // conditioning + one step

  auto t1 = Clock::now();
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(gst_harness_push(h, make_buffer(input, i * frame, frame)), GST_FLOW_OK);
  EXPECT_LT(seconds_since(t1), 2.0) << "a live source was blocked";
  auto qos = test::pop_messages(bus, GST_MESSAGE_QOS);
  ASSERT_EQ(qos.size(), 2u) << "frames 1 and 2 are replaced by newer ones";
  GstFormat format;
  guint64 processed = 0, dropped = 0;
  gst_message_parse_qos_stats(qos.back(), &format, &processed, &dropped);
  EXPECT_EQ(format, GST_FORMAT_BUFFERS);
  EXPECT_EQ(processed, 4u);
  EXPECT_EQ(dropped, 2u);
  GstClockTime ts = 0;
  gst_message_parse_qos(qos.front(), nullptr, nullptr, nullptr, &ts, nullptr);
  EXPECT_EQ(ts, frame);
  test::unref_messages(qos);
  EXPECT_EQ(gst_harness_buffers_received(h), 0u);

  auto t2 = Clock::now();
  gst_harness_teardown(h); // PLAYING -> NULL with step 2 of 200 running
  const double stop = seconds_since(t2);
  EXPECT_LT(stop, to_first_step + 5.0) << "stopping waited for more than the step in flight";
  EXPECT_EQ(test::live_engines(), 0);
  gst_object_unref(bus);
}
