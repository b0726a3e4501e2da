// The element's C++ state and the functions of each part of it (one file each): pads.cpp (events,
// queries, the chain function), task.cpp (the src pad's task: generation and pushing, its start,
// pause and stop), element.cpp (GObject boilerplate, properties, state changes).
//
// Threads, as in GStreamer's queue element: upstream's streaming thread runs the chain function,
// which converts each frame and queues it (with the serialized events and DRAIN queries between
// frames); the src pad's GstTask takes the items in order, runs the engine and pushes the results
// and the events, so events never overtake buffers; the application thread changes state. The
// task starts and stops with the src pad's activation, FLUSH_START pauses it and FLUSH_STOP
// starts it again; whoever must wait for it to let go of its item takes the src pad's stream
// lock, which the task holds while it works (gst_pad_pause_task and gst_pad_stop_task do). `mutex`
// guards the queue, `srcresult` and `drained`; GST_OBJECT_LOCK guards `settings`.
#pragma once

#include <gst/video/video.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

#include "gstzero123pp.hpp"
#include "settings.hpp"
#include "z123/engine.hpp"

namespace z123gst {

struct Frame {
  z123::Image image;
  GstClockTime pts = GST_CLOCK_TIME_NONE, dts = GST_CLOCK_TIME_NONE, duration = GST_CLOCK_TIME_NONE;
};

// A queued frame; or a serialized event (owned) to push after the frames before it; or a DRAIN
// query's place in the queue (only compared, never touched: its sender may have given up on it).
struct Item {
  Frame frame;
  GstEvent* event = nullptr;
  const GstQuery* drain = nullptr;
};

struct Impl {
  // Properties (GST_OBJECT_LOCK).
  Settings settings;

  // Hand-over between the chain function and the task (mutex). `srcresult` is what the
  // streaming side gets back and what keeps the task going: FLUSHING while flushing or stopped,
  // the flow of a failed push (the task has paused itself), OK otherwise. `drained` is the last
  // DRAIN query the task reached.
  std::mutex mutex;
  std::condition_variable cond;
  std::deque<Item> queue;
  GstFlowReturn srcresult = GST_FLOW_FLUSHING;
  const GstQuery* drained = nullptr;
  // Read by the engine before every step: set on flush and deactivation to stop work quickly.
  std::atomic<bool> cancel{false};

  // Alive between READY->PAUSED and PAUSED->READY. `view_size` and `layout` are fixed for that
  // time (the src caps depend on them).
  std::unique_ptr<z123::Engine> engine;
  int view_size = kViewSizeDefault;
  Layout layout{z123::kViewColumns, z123::kViewRows};

  // Streaming thread only.
  GstVideoInfo in_info{};
  bool have_caps = false;
  int live = -1; // upstream liveness from the latency query: -1 not asked yet, 0 no, 1 yes
  GstSegment segment{};
  std::uint64_t processed = 0, dropped = 0;
};

// pads.cpp
void setup_pads(GstZero123pp* self);
// Caps the src pad produces with the current view-size / tiling (framerate as given, or any).
GstCaps* src_caps(GstZero123pp* self, const GValue* framerate);

// task.cpp
// Activation function of the src pad: push mode starts the task, deactivation stops it (at most
// the denoising step in flight) and empties the queue.
gboolean src_activate_mode(GstPad* pad, GstObject* parent, GstPadMode mode, gboolean active);
// Sets `srcresult` to FLUSHING, cancels the generation in flight and wakes whoever waits on
// `cond`: the task lets go of its item within a step, and the chain function and a DRAIN query
// return.
void halt(Impl& impl);
// FLUSH_START: halts and pauses the task without waiting for it, then forwards the event.
gboolean flush_start(GstZero123pp* self, GstEvent* event);
// FLUSH_STOP: waits for the task to let go, empties the queue (its sticky events are stored on
// the src pad), forwards the event and starts the task again.
gboolean flush_stop(GstZero123pp* self, GstEvent* event);

// element.cpp: live engine count (test hook for leak checks; see element.cpp).
void count_engine(int delta);

} // namespace z123gst
