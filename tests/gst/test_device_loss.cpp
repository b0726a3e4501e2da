// A lost device inside the element (simulated with the fault-injection hook, Z123_FAULT, which the
// plugin's own copy of the engine reads): the frame in flight fails, the element posts an ERROR
// message naming the loss, and after NULL -> PLAYING (a new engine on the device) frames flow
// again with the engine's exact pixels.
#include <gst/check/gstharness.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "element_util.hpp"
#include "gst_env.hpp"
#include "support/golden.hpp"

using namespace z123::test;

namespace {

struct ClearFault {
  ~ClearFault() { unsetenv("Z123_FAULT"); }
};

} // namespace

TEST(GstFaults, DeviceLostPostsAnErrorAndANullPlayingCycleRecovers) {
  ClearFault clear;
  GstElement* e = make_element();
  ASSERT_NE(e, nullptr);
  // The fast synthetic model without guidance: a short generation on lavapipe.
  g_object_set(e, "model", z123::test::fast_model_dir().c_str(), "guidance-scale", 1.0, nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  GstHarness* h = gst_harness_new_with_element(e, "sink", "src"); // PLAYING: the model loads here
  gst_harness_set_src_caps_str(h, kInputCaps);
  const z123::Image input = input_image();

  // Every submission fails from now on, as on a device that is gone.
  setenv("Z123_FAULT", "submit:1:sticky", 1);
  gst_harness_push(h, make_buffer(input, 0, GST_SECOND)); // the flow return may already say error
  GstMessage* err = gst_bus_timed_pop_filtered(bus, 600 * GST_SECOND, GST_MESSAGE_ERROR);
  ASSERT_NE(err, nullptr) << "no error message for the lost device";
  const std::string text = error_text(err);
  EXPECT_NE(text.find("VK_ERROR_DEVICE_LOST"), std::string::npos) << text;
  gst_message_unref(err);

  // The device "comes back"; the application cycles the element through NULL.
  unsetenv("Z123_FAULT");
  ASSERT_EQ(gst_element_set_state(e, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  EXPECT_EQ(live_engines(), 0);
  ASSERT_NE(gst_element_set_state(e, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  gst_harness_set_src_caps_str(h, kInputCaps);
  EXPECT_EQ(gst_harness_push(h, make_buffer(input, GST_SECOND, GST_SECOND)), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  ASSERT_NE(out, nullptr) << "no frame after the NULL -> PLAYING cycle";
  gst_buffer_unref(out);
  auto errors = pop_messages(bus, GST_MESSAGE_ERROR);
  for (GstMessage* m : errors) ADD_FAILURE() << "error after recovery: " << error_text(m);
  unref_messages(errors);
  gst_harness_teardown(h);
  gst_object_unref(bus);
}
