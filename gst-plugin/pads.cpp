// The streaming side of the element: caps handling, events, queries and the chain function.
// Frames are converted to engine images here (on upstream's streaming thread) and queued for the
// src pad's task (task.cpp); serialized events and DRAIN queries are queued too, so the task
// handles everything in order.
#include <vector>

#include "convert.hpp"
#include "impl.hpp"

#define GST_CAT_DEFAULT gst_zero123pp_debug

namespace z123gst {
namespace {

Impl& impl_of(GstObject* parent) { return *GST_ZERO123PP(parent)->impl; }

bool is_frame(const Item& item) { return !item.event && !item.drain; }

bool has_pending_frame(const Impl& im) {
  for (const Item& item : im.queue)
    if (is_frame(item)) return true;
  return false;
}

// Queues a serialized event behind the frames already waiting. Refused while flushing or stopped
// (the event belongs to data that is being thrown away) and after a failed push (the task has
// paused; upstream learns why from the flow of its next buffer).
gboolean queue_event(Impl& im, GstEvent* event) {
  std::lock_guard<std::mutex> lock(im.mutex);
  if (im.srcresult != GST_FLOW_OK) {
    gst_event_unref(event);
    return FALSE;
  }
  im.queue.push_back(Item{Frame{}, event, nullptr});
  im.cond.notify_all();
  return TRUE;
}

// The upstream latency query says whether the source is live (a camera, an is-live test source).
// No answer counts as not live: then nothing is ever dropped.
bool upstream_is_live(GstZero123pp* self) {
  GstQuery* query = gst_query_new_latency();
  gboolean live = FALSE;
  if (gst_pad_peer_query(self->sinkpad, query)) gst_query_parse_latency(query, &live, nullptr, nullptr);
  gst_query_unref(query);
  GST_INFO_OBJECT(self, "upstream is %s",
                  live ? "live: frames arriving while busy follow drop-policy" : "not live: every frame is processed");
  return live;
}

struct Dropped {
  GstClockTime pts, duration;
};

// One QoS message per dropped frame, as GStreamer elements that drop frames do, with the running
// totals of this element (GST_FORMAT_BUFFERS: frames accepted / frames dropped).
void post_qos(GstZero123pp* self, const Impl& im, const Dropped& d) {
  GstClockTime running = GST_CLOCK_TIME_NONE, stream = GST_CLOCK_TIME_NONE;
  if (im.segment.format == GST_FORMAT_TIME && GST_CLOCK_TIME_IS_VALID(d.pts)) {
    running = gst_segment_to_running_time(&im.segment, GST_FORMAT_TIME, d.pts);
    stream = gst_segment_to_stream_time(&im.segment, GST_FORMAT_TIME, d.pts);
  }
  GstMessage* msg = gst_message_new_qos(GST_OBJECT_CAST(self), TRUE, running, stream, d.pts, d.duration);
  gst_message_set_qos_stats(msg, GST_FORMAT_BUFFERS, im.processed, im.dropped);
  gst_element_post_message(GST_ELEMENT_CAST(self), msg);
}

GstFlowReturn sink_chain(GstPad* /*pad*/, GstObject* parent, GstBuffer* buffer) {
  GstZero123pp* self = GST_ZERO123PP(parent);
  Impl& im = impl_of(parent);
  if (!im.have_caps) {
    gst_buffer_unref(buffer);
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (nullptr), ("a buffer arrived before any caps"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (im.live < 0) im.live = upstream_is_live(self) ? 1 : 0;

  Frame frame;
  frame.pts = GST_BUFFER_PTS(buffer);
  frame.dts = GST_BUFFER_DTS(buffer);
  frame.duration = GST_BUFFER_DURATION(buffer);
  GstVideoFrame vf;
  if (!gst_video_frame_map(&vf, &im.in_info, buffer, GST_MAP_READ)) {
    gst_buffer_unref(buffer);
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Could not read an input frame."),
                      ("the buffer does not hold a frame of the negotiated size"));
    return GST_FLOW_ERROR;
  }
  frame.image = image_from_frame(vf);
  gst_video_frame_unmap(&vf);
  gst_buffer_unref(buffer);

  DropPolicy policy = DropPolicy::Block;
  if (im.live == 1) {
    GST_OBJECT_LOCK(self);
    policy = im.settings.drop_policy;
    GST_OBJECT_UNLOCK(self);
  }

  std::vector<Dropped> dropped;
  {
    std::unique_lock<std::mutex> lock(im.mutex);
    // Back-pressure: one frame may wait while the task generates; the next one blocks here.
    if (policy == DropPolicy::Block)
      im.cond.wait(lock, [&] { return im.srcresult != GST_FLOW_OK || !has_pending_frame(im); });
    if (im.srcresult != GST_FLOW_OK) return im.srcresult;
    ++im.processed;
    if (policy == DropPolicy::KeepNewest) {
      for (auto it = im.queue.begin(); it != im.queue.end();) {
        if (!is_frame(*it)) {
          ++it;
          continue;
        }
        dropped.push_back({it->frame.pts, it->frame.duration});
        it = im.queue.erase(it);
      }
    } else if (policy == DropPolicy::KeepOldest && has_pending_frame(im)) {
      dropped.push_back({frame.pts, frame.duration});
    }
    if (dropped.empty() || policy == DropPolicy::KeepNewest) {
      im.queue.push_back(Item{std::move(frame), nullptr, nullptr});
      im.cond.notify_all();
    }
  }
  for (const Dropped& d : dropped) {
    ++im.dropped;
    GST_DEBUG_OBJECT(self, "dropped frame %" GST_TIME_FORMAT " (%" G_GUINT64_FORMAT " so far)", GST_TIME_ARGS(d.pts),
                     im.dropped);
    post_qos(self, im, d);
  }
  return GST_FLOW_OK;
}

gboolean on_caps(GstZero123pp* self, Impl& im, GstEvent* event) {
  GstCaps* caps = nullptr;
  gst_event_parse_caps(event, &caps);
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, caps) || !is_supported_format(GST_VIDEO_INFO_FORMAT(&info))) {
    GST_WARNING_OBJECT(self, "refusing caps %" GST_PTR_FORMAT, caps);
    gst_event_unref(event);
    return FALSE;
  }
  im.in_info = info;
  im.have_caps = true;
  GValue fps = G_VALUE_INIT;
  g_value_init(&fps, GST_TYPE_FRACTION);
  gst_value_set_fraction(&fps, GST_VIDEO_INFO_FPS_N(&info), GST_VIDEO_INFO_FPS_D(&info));
  GstCaps* out = src_caps(self, &fps);
  g_value_unset(&fps);
  gst_event_unref(event);
  GST_DEBUG_OBJECT(self, "input %" GST_PTR_FORMAT ", output %" GST_PTR_FORMAT, caps, out);
  GstEvent* out_event = gst_event_new_caps(out);
  gst_caps_unref(out);
  return queue_event(im, out_event);
}

gboolean sink_event(GstPad* pad, GstObject* parent, GstEvent* event) {
  GstZero123pp* self = GST_ZERO123PP(parent);
  Impl& im = impl_of(parent);
  switch (GST_EVENT_TYPE(event)) {
  case GST_EVENT_FLUSH_START:
    // Out of band: cancels the generation in flight (the engine checks before every step), wakes
    // a chain call blocked on back-pressure and pauses the task, without waiting for it.
    return flush_start(self, event);
  case GST_EVENT_FLUSH_STOP: {
    // Serialized with the chain function (GstPad holds the sink pad's stream lock): waits for the
    // task to let go, drops the queued frames, keeps the queued sticky events on the src pad.
    const gboolean forwarded = flush_stop(self, event);
    gst_segment_init(&im.segment, GST_FORMAT_TIME);
    return forwarded;
  }
  case GST_EVENT_CAPS: return on_caps(self, im, event);
  case GST_EVENT_SEGMENT: gst_event_copy_segment(event, &im.segment); break;
  case GST_EVENT_STREAM_START: im.live = -1; break; // a new stream may come from another source
  default: break;
  }
  if (GST_EVENT_IS_SERIALIZED(event)) return queue_event(im, event);
  return gst_pad_event_default(pad, parent, event);
}

// Answers a CAPS query with `caps` (taken) narrowed by the query's filter, if any.
gboolean answer_caps_query(GstQuery* query, GstCaps* caps) {
  GstCaps* filter = nullptr;
  gst_query_parse_caps(query, &filter);
  if (filter) {
    GstCaps* both = gst_caps_intersect_full(filter, caps, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref(caps);
    caps = both;
  }
  gst_query_set_caps_result(query, caps);
  gst_caps_unref(caps);
  return TRUE;
}

gboolean sink_query(GstPad* pad, GstObject* parent, GstQuery* query) {
  Impl& im = impl_of(parent);
  switch (GST_QUERY_TYPE(query)) {
  case GST_QUERY_CAPS: {
    // What we accept does not depend on downstream: the output format is fixed.
    return answer_caps_query(query, gst_pad_get_pad_template_caps(pad));
  }
  case GST_QUERY_ACCEPT_CAPS: {
    GstCaps* caps = nullptr;
    gst_query_parse_accept_caps(query, &caps);
    GstCaps* templ = gst_pad_get_pad_template_caps(pad);
    gst_query_set_accept_caps_result(query, gst_caps_is_subset(caps, templ));
    gst_caps_unref(templ);
    return TRUE;
  }
  case GST_QUERY_ALLOCATION:
    // Downstream buffers are a different size and format; upstream uses its own defaults.
    return FALSE;
  case GST_QUERY_DRAIN: {
    // Serialized: queued, and answered once the task reaches it, every frame before it pushed.
    std::unique_lock<std::mutex> lock(im.mutex);
    if (im.srcresult != GST_FLOW_OK) return FALSE;
    im.queue.push_back(Item{Frame{}, nullptr, query});
    im.cond.notify_all();
    im.cond.wait(lock, [&] { return im.srcresult != GST_FLOW_OK || im.drained == query; });
    const bool drained = im.drained == query;
    im.drained = nullptr;
    return drained;
  }
  default: return gst_pad_query_default(pad, parent, query);
  }
}

gboolean src_query(GstPad* pad, GstObject* parent, GstQuery* query) {
  GstZero123pp* self = GST_ZERO123PP(parent);
  if (GST_QUERY_TYPE(query) == GST_QUERY_CAPS) {
    return answer_caps_query(query, src_caps(self, nullptr));
  }
  return gst_pad_query_default(pad, parent, query);
}

} // namespace

GstCaps* src_caps(GstZero123pp* self, const GValue* framerate) {
  GST_OBJECT_LOCK(self);
  const int view = self->impl->settings.view_size;
  const Layout layout = tiling_layout(self->impl->settings.tiling);
  GST_OBJECT_UNLOCK(self);
  GstCaps* caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "RGBA", "width", G_TYPE_INT,
                                      layout.columns * view, "height", G_TYPE_INT, layout.rows * view,
                                      "pixel-aspect-ratio", GST_TYPE_FRACTION, 1, 1, nullptr);
  if (framerate)
    gst_caps_set_value(caps, "framerate", framerate);
  else
    gst_caps_set_simple(caps, "framerate", GST_TYPE_FRACTION_RANGE, 0, 1, G_MAXINT, 1, nullptr);
  return caps;
}

void setup_pads(GstZero123pp* self) {
  gst_pad_set_activatemode_function(self->srcpad, GST_DEBUG_FUNCPTR(src_activate_mode));
  gst_pad_set_chain_function(self->sinkpad, GST_DEBUG_FUNCPTR(sink_chain));
  gst_pad_set_event_function(self->sinkpad, GST_DEBUG_FUNCPTR(sink_event));
  gst_pad_set_query_function(self->sinkpad, GST_DEBUG_FUNCPTR(sink_query));
  gst_pad_set_query_function(self->srcpad, GST_DEBUG_FUNCPTR(src_query));
}

} // namespace z123gst
