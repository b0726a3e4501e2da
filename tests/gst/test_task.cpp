// The element's own streaming thread is its src pad's GstTask, as in GStreamer's queue element:
// the task announces itself with STREAM_STATUS messages (CREATE and ENTER when the src pad
// activates, LEAVE when it deactivates: applications use them to name threads or set their
// priority), FLUSH_START pauses it at once and FLUSH_STOP starts the same task again. DRAIN
// queries are queued with the frames and answered by the task.
#include <gst/check/gstharness.h>
#include <gtest/gtest.h>

#include <vector>

#include "element_util.hpp"
#include "gst_env.hpp"

using namespace z123::test;

namespace {

// The type of a STREAM_STATUS message, after checking that it comes from the src pad's task.
GstStreamStatusType stream_status(GstMessage* m, GstElement* element, GstPad* src, GstTask** task) {
  GstStreamStatusType type;
  GstElement* owner = nullptr;
  gst_message_parse_stream_status(m, &type, &owner);
  EXPECT_EQ(owner, element);
  EXPECT_EQ(GST_MESSAGE_SRC(m), GST_OBJECT_CAST(src));
  const GValue* object = gst_message_get_stream_status_object(m);
  EXPECT_TRUE(object && G_VALUE_HOLDS(object, GST_TYPE_TASK));
  GstTask* t = object && G_VALUE_HOLDS(object, GST_TYPE_TASK) ? GST_TASK(g_value_get_object(object)) : nullptr;
  if (!*task) *task = t;
  EXPECT_EQ(t, *task) << "one task from start to stop";
  return type;
}

} // namespace

TEST(GstTask, StreamStatusMessagesAnnounceTheSrcPadTask) {
  GstElement* e = make_element();
  ASSERT_NE(e, nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  GstPad* src = gst_element_get_static_pad(e, "src");
  ASSERT_NE(gst_element_set_state(e, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  EXPECT_EQ(gst_pad_get_task_state(src), GST_TASK_STARTED);

  // CREATE from the activation, then ENTER from the task's own thread once it runs.
  std::vector<GstStreamStatusType> types;
  GstTask* task = nullptr;
  while (types.size() < 2) {
    GstMessage* m = gst_bus_timed_pop_filtered(bus, 60 * GST_SECOND, GST_MESSAGE_STREAM_STATUS);
    ASSERT_NE(m, nullptr) << "no STREAM_STATUS message after " << types.size();
    types.push_back(stream_status(m, e, src, &task));
    gst_message_unref(m);
  }
  EXPECT_EQ(types, (std::vector<GstStreamStatusType>{GST_STREAM_STATUS_TYPE_CREATE, GST_STREAM_STATUS_TYPE_ENTER}));

  // LEAVE from the task's thread as it ends, before the state change returns.
  ASSERT_EQ(gst_element_set_state(e, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  EXPECT_EQ(gst_pad_get_task_state(src), GST_TASK_STOPPED);
  types.clear();
  auto messages = pop_messages(bus, GST_MESSAGE_STREAM_STATUS);
  for (GstMessage* m : messages) types.push_back(stream_status(m, e, src, &task));
  EXPECT_EQ(types, std::vector<GstStreamStatusType>{GST_STREAM_STATUS_TYPE_LEAVE});
  unref_messages(messages);
  EXPECT_EQ(live_engines(), 0);
  gst_object_unref(src);
  gst_object_unref(bus);
  gst_object_unref(e);
}

TEST(GstTask, FlushStartPausesTheTaskAndFlushStopStartsItAgain) {
  GstElement* e = make_element();
  ASSERT_NE(e, nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  GstHarness* h = gst_harness_new_with_element(e, "sink", "src"); // PLAYING
  gst_harness_set_src_caps_str(h, kInputCaps);
  GstPad* src = gst_element_get_static_pad(e, "src");
  EXPECT_EQ(gst_pad_get_task_state(src), GST_TASK_STARTED);
  for (int flush = 0; flush < 2; ++flush) {
    ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_start()));
    EXPECT_EQ(gst_pad_get_task_state(src), GST_TASK_PAUSED) << "flush " << flush;
    ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
    EXPECT_EQ(gst_pad_get_task_state(src), GST_TASK_STARTED) << "flush " << flush;
  }
  // Flushes pause and start the task created with the pad's activation: no new one.
  auto messages = pop_messages(bus, GST_MESSAGE_STREAM_STATUS);
  int created = 0;
  for (GstMessage* m : messages) {
    GstStreamStatusType type;
    gst_message_parse_stream_status(m, &type, nullptr);
    created += type == GST_STREAM_STATUS_TYPE_CREATE;
  }
  EXPECT_EQ(created, 1);
  unref_messages(messages);
  gst_harness_teardown(h);
  EXPECT_EQ(gst_pad_get_task_state(src), GST_TASK_STOPPED);
  EXPECT_EQ(live_engines(), 0);
  gst_object_unref(src);
  gst_object_unref(bus);
}

// A DRAIN query waits in the queue behind the frames before it: answered once the task has pushed
// them (a decoder sends one before it reallocates the buffers it gave downstream).
TEST(GstTask, DrainQueryIsAnsweredOnceTheFramesBeforeItAreOut) {
  GstElement* e = make_element();
  ASSERT_NE(e, nullptr);
  GstHarness* h = gst_harness_new_with_element(e, "sink", "src");
  gst_harness_set_src_caps_str(h, kInputCaps);
  ASSERT_EQ(gst_harness_push(h, make_buffer(input_image(), 0, GST_SECOND)), GST_FLOW_OK);
  GstQuery* drain = gst_query_new_drain();
  EXPECT_TRUE(gst_pad_peer_query(h->srcpad, drain));
  gst_query_unref(drain);
  EXPECT_EQ(gst_harness_buffers_received(h), 1u) << "DRAIN was answered before the frame came out";
  gst_harness_teardown(h);
  EXPECT_EQ(live_engines(), 0);
}
