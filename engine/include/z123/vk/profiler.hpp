// Per-dispatch GPU timing for performance work, switched on with Z123_PROFILE=1: every recording
// then writes a timestamp after each dispatch, copy and fill, and the device folds the intervals
// of each completed submission into one table (kernel name and grid, calls, total and mean
// time), printed to stderr when the device is destroyed. Timestamps at the bottom of the pipe
// wait for the preceding work, so the numbers also include the gaps between dependent
// dispatches; they are for finding where time goes, not for the benchmark tables.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

namespace z123::vk {

class Profiler {
public:
  // Z123_PROFILE set to anything but "" or "0" (read once per process).
  static bool requested();
  // Z123_PROFILE_LEVELS set to anything but "" or "0" (read once per process): main-queue
  // recordings ordered by levels (vk::Recording::order_by_levels) keep that order, the passes
  // their queues, and write one timestamp after each level, so the table gets one line per level
  // ("level N: its commands' labels") with the time the level took in the real schedule, the
  // other queue's work beside it included. Where Z123_PROFILE times each command alone, in
  // recorded order, this shows which levels the step spends its time in, and how long each
  // level's small kernels hold the queue.
  static bool levels_requested();

  void add(const std::string& label, double ms);
  // Z123_PROFILE_LEVELS: a level-ordered pass, submission `submission` of the main queue's
  // timeline, ran from start_ms to end_ms of device time. Where the pass before it was the
  // submission just before, the time between the two (the queue idle: waiting on the side queue's
  // work or for the host's next submission) is summed apart from the table, which holds time in
  // levels only: a level that removes work from the main queue can lengthen this wait instead.
  void add_pass(uint64_t submission, double start_ms, double end_ms);
  // The gaps add_pass summed: how many, and their total in milliseconds.
  uint64_t pass_gaps() const;
  double pass_gap_ms() const;
  bool empty() const;
  // How many intervals were added under `label` (0 for none), and under how many labels in all.
  uint64_t calls(const std::string& label) const;
  size_t labels() const;
  // The table, largest total first; lines that together hold less than 1% are summed.
  void print(std::FILE* out, const std::string& title) const;

private:
  struct Entry {
    uint64_t calls = 0;
    double total_ms = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  bool have_pass_ = false;
  uint64_t last_submission_ = 0;
  double last_end_ms_ = 0, gap_total_ms_ = 0, gap_longest_ms_ = 0;
  uint64_t gaps_ = 0;
};

} // namespace z123::vk
