// The src pad's task: takes the queued items in order, runs the engine on frames (posting a
// progress message per step) and pushes the results, with the input's timestamps and the pose
// metadata, and the serialized events that were queued between frames; answers the DRAIN queries
// queued among them. Also its life: started and stopped with the src pad's activation, paused by
// FLUSH_START and started again by FLUSH_STOP, as GStreamer's queue element does.
#include "convert.hpp"
#include "impl.hpp"
#include "poses_meta.hpp"

#define GST_CAT_DEFAULT gst_zero123pp_debug

namespace z123gst {
namespace {

void post_progress(GstZero123pp* self, const Frame& frame, std::uint64_t seed, int step, int total) {
  GstStructure* s = gst_structure_new("zero123pp-progress", "timestamp", G_TYPE_UINT64, static_cast<guint64>(frame.pts),
                                      "step", G_TYPE_INT, step, "total", G_TYPE_INT, total, "seed", G_TYPE_UINT64,
                                      static_cast<guint64>(seed), nullptr);
  gst_element_post_message(GST_ELEMENT_CAST(self), gst_message_new_element(GST_OBJECT_CAST(self), s));
}

// Engine failures while streaming are fatal for the stream: the element posts an error (the
// application sees which frame and why) and returns GST_FLOW_ERROR upstream.
GstFlowReturn report(GstZero123pp* self, const Frame& frame, const z123::Error& e) {
  if (e.kind() == z123::ErrorKind::InvalidArgument || e.kind() == z123::ErrorKind::Format)
    GST_ELEMENT_ERROR(
        self, STREAM, FAILED,
        ("Cannot generate views for the frame at %" GST_TIME_FORMAT ": %s", GST_TIME_ARGS(frame.pts), e.what()),
        (nullptr));
  else
    GST_ELEMENT_ERROR(self, LIBRARY, FAILED, ("Generation failed (%s): %s", z123::error_kind_name(e.kind()), e.what()),
                      (nullptr));
  return GST_FLOW_ERROR;
}

GstFlowReturn generate_and_push(GstZero123pp* self, const Frame& frame) {
  Impl& im = *self->impl;
  GST_OBJECT_LOCK(self);
  const Settings s = im.settings;
  GST_OBJECT_UNLOCK(self);

  z123::GenerateOptions o;
  o.steps = s.steps;
  o.guidance_scale = static_cast<float>(s.guidance_scale);
  o.seed = s.random_seed ? (static_cast<std::uint64_t>(g_random_int()) << 32) | g_random_int() : s.seed;
  o.sampler = s.sampler;
  o.spacing = s.spacing;
  o.width = z123::kViewColumns * im.view_size; // the engine renders the model's grid; write_tiled re-arranges it
  o.height = z123::kViewRows * im.view_size;
  o.cancel = &im.cancel;
  o.on_step = [&](int step, int total) { post_progress(self, frame, o.seed, step, total); };

  z123::GenerateResult result;
  try {
    result = im.engine->generate(frame.image, o);
  } catch (const z123::Error& e) {
    if (e.kind() == z123::ErrorKind::Cancelled) {
      GST_DEBUG_OBJECT(self, "generation cancelled: %s", e.what());
      return GST_FLOW_FLUSHING;
    }
    return report(self, frame, e);
  } catch (const std::exception& e) {
    return report(self, frame, z123::Error(z123::ErrorKind::Internal, e.what()));
  }
  GST_DEBUG_OBJECT(self, "frame %" GST_TIME_FORMAT " done in %.0f ms", GST_TIME_ARGS(frame.pts),
                   result.timings.total_ms);

  const Layout layout = im.layout;
  const std::size_t stride = static_cast<std::size_t>(layout.columns * im.view_size) * 4;
  const std::size_t size = stride * static_cast<std::size_t>(layout.rows * im.view_size);
  GstBuffer* out = gst_buffer_new_allocate(nullptr, size, nullptr);
  GstMapInfo map;
  if (!gst_buffer_map(out, &map, GST_MAP_WRITE)) {
    gst_buffer_unref(out);
    GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("Could not map an output buffer."), (nullptr));
    return GST_FLOW_ERROR;
  }
  z123::write_tiled(result.image, im.view_size, layout, map.data, stride);
  gst_buffer_unmap(out, &map);
  GST_BUFFER_PTS(out) = frame.pts;
  GST_BUFFER_DTS(out) = frame.dts;
  GST_BUFFER_DURATION(out) = frame.duration;
  add_poses_meta(out, layout, im.view_size, o.seed);
  {
    // A flush or stop that started during generation: the result belongs to discarded data.
    std::lock_guard<std::mutex> lock(im.mutex);
    if (im.srcresult != GST_FLOW_OK) {
      gst_buffer_unref(out);
      return im.srcresult;
    }
  }
  GstFlowReturn flow = gst_pad_push(self->srcpad, out);
  if (flow == GST_FLOW_NOT_LINKED || flow < GST_FLOW_EOS) GST_ELEMENT_FLOW_ERROR(self, flow);
  return flow;
}

// Empties the queue: the events go, unless `keep_sticky` and they are sticky, then onto the src
// pad (caller holds `mutex`, and the task is not running).
void empty_queue(GstZero123pp* self, bool keep_sticky) {
  Impl& im = *self->impl;
  for (Item& item : im.queue) {
    if (!item.event) continue;
    if (keep_sticky && GST_EVENT_IS_STICKY(item.event)) gst_pad_store_sticky_event(self->srcpad, item.event);
    gst_event_unref(item.event);
  }
  im.queue.clear();
}

// One item per call. GstTask calls this in a loop, holding the src pad's stream lock, until the
// task is paused or stopped; a failed push pauses it from here (as queue's loop does), and
// `srcresult` tells the streaming side why.
void task_loop(gpointer user_data) {
  GstZero123pp* self = GST_ZERO123PP(user_data);
  Impl& im = *self->impl;
  Item item;
  {
    std::unique_lock<std::mutex> lock(im.mutex);
    im.cond.wait(lock, [&] { return im.srcresult != GST_FLOW_OK || !im.queue.empty(); });
    if (im.srcresult != GST_FLOW_OK) {
      GST_DEBUG_OBJECT(self, "pausing the task: %s", gst_flow_get_name(im.srcresult));
      lock.unlock();
      gst_pad_pause_task(self->srcpad); // from the task itself: returns at once
      return;
    }
    item = std::move(im.queue.front());
    im.queue.pop_front();
    if (item.drain) im.drained = item.drain; // everything before the query is out
    // A chain call waiting for the pending slot, or the DRAIN query, may go on.
    im.cond.notify_all();
  }
  GstFlowReturn flow = GST_FLOW_OK;
  if (item.event) {
    // A sticky event refused because a flush began stays stored on the src pad (all but SEGMENT
    // and EOS) and goes out before the next buffer after the flush.
    const char* type = GST_EVENT_TYPE_NAME(item.event); // the push takes the event
    if (!gst_pad_push_event(self->srcpad, item.event)) GST_DEBUG_OBJECT(self, "downstream refused a %s event", type);
  } else if (!item.drain) {
    flow = generate_and_push(self, item.frame);
  }
  if (flow == GST_FLOW_OK) return;
  {
    std::lock_guard<std::mutex> lock(im.mutex);
    if (im.srcresult == GST_FLOW_OK) im.srcresult = flow; // FLUSHING from a flush or stop stays
    im.cond.notify_all();
  }
  GST_DEBUG_OBJECT(self, "pausing the task: %s", gst_flow_get_name(flow));
  gst_pad_pause_task(self->srcpad);
}

bool start_task(GstZero123pp* self) { return gst_pad_start_task(self->srcpad, task_loop, self, nullptr); }

} // namespace

void halt(Impl& im) {
  std::lock_guard<std::mutex> lock(im.mutex);
  im.srcresult = GST_FLOW_FLUSHING;
  im.cancel = true;
  im.cond.notify_all();
}

gboolean src_activate_mode(GstPad* pad, GstObject* parent, GstPadMode mode, gboolean active) {
  if (mode != GST_PAD_MODE_PUSH) return FALSE;
  GstZero123pp* self = GST_ZERO123PP(parent);
  Impl& im = *self->impl;
  if (active) {
    {
      std::lock_guard<std::mutex> lock(im.mutex);
      im.srcresult = GST_FLOW_OK;
      im.cancel = false;
    }
    return start_task(self);
  }
  // GstElement deactivates the src pads before the sink pads: halting here also frees a chain call
  // blocked on back-pressure, which the sink pad's deactivation then waits for.
  halt(im);
  // Joins the task: the generation in flight ends before its next step.
  const gboolean stopped = gst_pad_stop_task(pad);
  std::lock_guard<std::mutex> lock(im.mutex);
  empty_queue(self, false);
  return stopped;
}

gboolean flush_start(GstZero123pp* self, GstEvent* event) {
  halt(*self->impl);
  const gboolean forwarded = gst_pad_push_event(self->srcpad, event);
  // Paused without waiting for the task to let go: gst_pad_pause_task would wait for the step in
  // flight, and FLUSH_START must return at once. FLUSH_STOP waits.
  GST_OBJECT_LOCK(self->srcpad);
  if (GstTask* task = GST_PAD_TASK(self->srcpad)) gst_task_pause(task);
  GST_OBJECT_UNLOCK(self->srcpad);
  return forwarded;
}

gboolean flush_stop(GstZero123pp* self, GstEvent* event) {
  Impl& im = *self->impl;
  halt(im); // for a FLUSH_STOP without FLUSH_START
  // Takes the src pad's stream lock, so the task has let go of its item when this returns: at
  // most the denoising step in flight, the generation being cancelled.
  gst_pad_pause_task(self->srcpad);
  {
    // The queued frames and events belong to flushed data, except what a flush leaves on a pad:
    // the sticky events, stored on the src pad while it is still flushing so that the pad's own
    // rules apply (SEGMENT and EOS are refused, and the FLUSH_STOP pushed below drops
    // STREAM_GROUP_DONE). Upstream does not send them again, so new caps queued behind the frame
    // in flight would be lost otherwise; the pad sends them before the next buffer.
    std::lock_guard<std::mutex> lock(im.mutex);
    empty_queue(self, true);
  }
  const gboolean forwarded = gst_pad_push_event(self->srcpad, event);
  std::lock_guard<std::mutex> lock(im.mutex);
  // Not once the pad deactivates (a state change racing the flush: it stops the task). The
  // deactivation marks the pad inactive before it takes `mutex` in src_activate_mode.
  if (gst_pad_is_active(self->srcpad)) {
    im.srcresult = GST_FLOW_OK;
    im.cancel = false;
    start_task(self);
  }
  return forwarded;
}

} // namespace z123gst
