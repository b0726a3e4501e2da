// The element's C++ state and the functions of each part of it (one file each): pads.cpp (events,
// queries, the chain function on the streaming thread), worker.cpp (the generation thread),
// element.cpp (GObject boilerplate, properties, state changes).
//
// Threads: the streaming thread converts each frame and queues it; the worker thread takes items
// in order, runs the engine and pushes results (and the serialized events queued between frames,
// so events never overtake buffers); the application thread changes state. `mutex` guards the
// queue and the flags; GST_OBJECT_LOCK guards `settings`.
#pragma once

#include <gst/video/video.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "gstzero123pp.hpp"
#include "settings.hpp"
#include "z123/engine.hpp"

namespace z123gst {

struct Frame {
  z123::Image image;
  GstClockTime pts = GST_CLOCK_TIME_NONE, dts = GST_CLOCK_TIME_NONE, duration = GST_CLOCK_TIME_NONE;
};

// A queued frame, or (event != nullptr) a serialized event to push after the frames before it.
struct Item {
  Frame frame;
  GstEvent* event = nullptr;
};

struct Impl {
  // Properties (GST_OBJECT_LOCK).
  Settings settings;

  // Work hand-over (mutex). `flushing` stops everything (flush, state change); `busy` is true
  // while the worker holds an item; `last_flow` is the result of the last push, returned
  // upstream by the next chain call so errors propagate.
  std::mutex mutex;
  std::condition_variable cond;
  std::deque<Item> queue;
  bool flushing = true, stopping = false, busy = false;
  GstFlowReturn last_flow = GST_FLOW_OK;
  // Read by the engine before every step: set on flush and state changes to stop work quickly.
  std::atomic<bool> cancel{false};

  // Alive between READY->PAUSED and PAUSED->READY. `view_size` and `layout` are fixed for that
  // time (the src caps depend on them).
  std::unique_ptr<z123::Engine> engine;
  std::thread worker;
  int view_size = kViewSizeDefault;
  Layout layout{2, 3};

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

// worker.cpp: the thread body; returns when `stopping` is set.
void worker_loop(GstZero123pp* self);
// Unrefs the events of queued items and empties the queue (caller holds `mutex`).
void clear_queue(Impl& impl);
// What a flush leaves of the queue (caller holds `mutex`): the frames and the events that belong
// to the flushed data go; the sticky events that outlive a flush on a GStreamer pad stay, in
// order, the last of each kind: CAPS, STREAM_START, TAG... but not SEGMENT, EOS or
// STREAM_GROUP_DONE, which FLUSH_STOP clears. Upstream does not send the kept ones again (they
// are still sticky on its pads), so they must still reach the src pad before the next frame.
void flush_queue(Impl& impl);
// Whether `event` outlives a flush (see flush_queue).
bool survives_flush(GstEvent* event);

// element.cpp: live engine count (test hook for leak checks; see element.cpp).
void count_engine(int delta);

} // namespace z123gst
