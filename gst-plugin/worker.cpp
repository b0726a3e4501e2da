// The generation thread: takes queued items in order, runs the engine on frames (posting a
// progress message per step) and pushes the results, with the input's timestamps and the pose
// metadata, and the serialized events that were queued between frames.
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
  o.width = 2 * im.view_size; // the engine renders the model's 2x3 grid; write_tiled re-arranges it
  o.height = 3 * im.view_size;
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
  write_tiled(result.image, im.view_size, layout, map.data, stride);
  gst_buffer_unmap(out, &map);
  GST_BUFFER_PTS(out) = frame.pts;
  GST_BUFFER_DTS(out) = frame.dts;
  GST_BUFFER_DURATION(out) = frame.duration;
  add_poses_meta(out, layout, im.view_size, o.seed);
  {
    // A flush or stop that started during generation: the result belongs to discarded data.
    std::lock_guard<std::mutex> lock(im.mutex);
    if (im.flushing) {
      gst_buffer_unref(out);
      return GST_FLOW_FLUSHING;
    }
  }
  GstFlowReturn flow = gst_pad_push(self->srcpad, out);
  if (flow == GST_FLOW_NOT_LINKED || flow < GST_FLOW_EOS) GST_ELEMENT_FLOW_ERROR(self, flow);
  return flow;
}

} // namespace

void clear_queue(Impl& impl) {
  for (Item& item : impl.queue)
    if (item.event) gst_event_unref(item.event);
  impl.queue.clear();
}

bool survives_flush(GstEvent* event) {
  switch (GST_EVENT_TYPE(event)) {
  case GST_EVENT_SEGMENT:
  case GST_EVENT_EOS:
  case GST_EVENT_STREAM_GROUP_DONE: return false;
  default: return GST_EVENT_IS_STICKY(event);
  }
}

namespace {

// Sticky events of one kind replace each other on a pad: same type, and for STICKY_MULTI types
// (custom sticky events) the same structure name.
bool same_sticky_kind(GstEvent* a, GstEvent* b) {
  if (GST_EVENT_TYPE(a) != GST_EVENT_TYPE(b)) return false;
  if (!(gst_event_type_get_flags(GST_EVENT_TYPE(a)) & GST_EVENT_TYPE_STICKY_MULTI)) return true;
  const GstStructure* sa = gst_event_get_structure(a);
  const GstStructure* sb = gst_event_get_structure(b);
  return sa && sb && gst_structure_get_name_id(sa) == gst_structure_get_name_id(sb);
}

} // namespace

void flush_queue(Impl& impl) {
  std::deque<Item> kept;
  for (Item& item : impl.queue) {
    if (!item.event) continue; // a frame: dropped
    if (!survives_flush(item.event)) {
      gst_event_unref(item.event);
      continue;
    }
    // A later event of the same kind replaces the earlier one, as on a pad.
    for (auto it = kept.begin(); it != kept.end(); ++it)
      if (same_sticky_kind(it->event, item.event)) {
        gst_event_unref(it->event);
        kept.erase(it);
        break;
      }
    kept.push_back(Item{Frame{}, item.event});
  }
  impl.queue.swap(kept);
}

void worker_loop(GstZero123pp* self) {
  Impl& im = *self->impl;
  for (;;) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(im.mutex);
      im.cond.wait(lock, [&] { return im.stopping || (!im.flushing && !im.queue.empty()); });
      if (im.stopping) return;
      item = std::move(im.queue.front());
      im.queue.pop_front();
      im.busy = true;
      im.cond.notify_all(); // a chain call waiting for the pending slot may go on
    }
    GstFlowReturn flow = GST_FLOW_OK;
    if (item.event) {
      // A flush starting during the push makes the src pad refuse the event without storing it as
      // sticky; one that outlives flushes then goes back to the queue, for after the flush.
      GstEvent* keep = survives_flush(item.event) ? gst_event_ref(item.event) : nullptr;
      const char* type = GST_EVENT_TYPE_NAME(item.event); // the push takes the event
      const bool pushed = gst_pad_push_event(self->srcpad, item.event);
      if (!pushed) GST_DEBUG_OBJECT(self, "downstream refused a %s event", type);
      if (keep) {
        std::lock_guard<std::mutex> lock(im.mutex);
        if (!pushed && im.flushing && !im.stopping) {
          GST_DEBUG_OBJECT(self, "keeping the %s event for after the flush", type);
          im.queue.push_front(Item{Frame{}, keep});
          keep = nullptr;
        }
      }
      if (keep) gst_event_unref(keep);
    } else {
      flow = generate_and_push(self, item.frame);
    }
    std::lock_guard<std::mutex> lock(im.mutex);
    im.busy = false;
    if (!im.flushing && flow != GST_FLOW_OK && im.last_flow == GST_FLOW_OK) im.last_flow = flow;
    im.cond.notify_all();
  }
}

} // namespace z123gst
