// A recorded command buffer of compute dispatches, copies and timestamps. Barriers are inserted
// automatically: a dispatch that reads or writes a buffer written since the last barrier, or
// writes one read since then, gets a barrier first; independent dispatches stay unordered.
// A recording can be submitted many times (record once per shape, replay every step). One that
// touches a buffer with no memory behind it (Allocator::create_unbacked_buffer) is made only to
// learn what it needs: its dispatches are skipped, and finish() refuses it.
// Commands are collected and written into the command buffer at finish(), so the pipelines they
// use compile on the pipeline cache's worker threads while the rest is being recorded.
// order_by_levels() changes how they are written: each command goes into the earliest level after
// every earlier command it depends on (through a buffer one of them writes and the other reads or
// writes), the levels are written in order with one barrier between them, so independent chains
// of commands recorded one after the other (the UNet's reference and main passes) run side by side.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "z123/vk/queue_role.hpp"

namespace z123::vk {

class Buffer;
class Device;
struct Pipeline;

struct Binding {
  const Buffer* buffer;
  bool written; // the kernel writes this binding
  VkDeviceSize offset = 0;
  VkDeviceSize range = VK_WHOLE_SIZE;
};

inline Binding in(const Buffer& b) { return {&b, false}; }
inline Binding out(const Buffer& b) { return {&b, true}; }

class Recording {
public:
  // max_timestamps: capacity of the timestamp query pool (0 = no timestamps). role: the queue
  // it is submitted to (vk::Device::submit), whose family's command pool it comes from.
  explicit Recording(Device& device, uint32_t max_timestamps = 0, QueueRole role = QueueRole::Main);
  Recording(Device& device, QueueRole role);
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  // detail: the problem's shape ("19200x320x2880"), appended to the dispatch's label in the
  // profile, so that kernels sharing a variant and grid are told apart.
  void dispatch(const Pipeline& pipeline, std::initializer_list<Binding> bindings, const void* push,
                uint32_t push_bytes, uint32_t groups_x, uint32_t groups_y = 1, uint32_t groups_z = 1,
                const std::string& detail = {});
  void dispatch(const Pipeline& pipeline, const std::vector<Binding>& bindings, const void* push, uint32_t push_bytes,
                uint32_t groups_x, uint32_t groups_y = 1, uint32_t groups_z = 1, const std::string& detail = {});
  void copy(const Buffer& src, const Buffer& dst, VkDeviceSize bytes, VkDeviceSize src_offset = 0,
            VkDeviceSize dst_offset = 0);
  void fill(const Buffer& dst, uint32_t value, VkDeviceSize offset = 0, VkDeviceSize bytes = VK_WHOLE_SIZE);
  // Every command recorded after this runs after every command recorded before it.
  void barrier();
  // Before the first command: write the commands by levels of dependence instead of in recorded
  // order (see above). Recordings with timestamps or profiled ones (Z123_PROFILE: each command's
  // time must be its own) keep the recorded order.
  void order_by_levels();
  // Writes a GPU timestamp after all previously recorded work; label names the interval that
  // ends here (see timings()).
  void timestamp(const std::string& label);
  // Closes the command buffer; it is then ready to submit (any number of times).
  void finish();
  bool finished() const { return finished_; }
  size_t dispatch_count() const { return dispatches_; }
  // Barriers recorded so far, automatic or explicit (ordered by levels: those finish() wrote).
  size_t barrier_count() const { return barriers_; }
  // The label of every dispatch so far, as the profile (Z123_PROFILE) names it:
  // "variant [gx x gy x gz] detail". The kernel benchmark matches its rows to the profile's.
  const std::vector<std::string>& dispatch_labels() const { return dispatch_labels_; }

  // After the submission completed: (label, milliseconds since the previous timestamp).
  std::vector<std::pair<std::string, double>> timings() const;

  VkCommandBuffer command_buffer() const { return cmd_; }
  QueueRole role() const { return role_; }
  uint64_t last_submit = 0; // value of its queue's timeline at the last submission (Device::submit)

  // Z123_PROFILE (z123/vk/profiler.hpp): whether this recording times each of its commands, and
  // after a submission completed, adds those times to `profiler`.
  // Z123_PROFILE_LEVELS (Profiler::levels_requested): a line per level instead.
  bool profiled() const { return profile_queries_ != VK_NULL_HANDLE || level_queries_ != VK_NULL_HANDLE; }
  void fold_profile(class Profiler& profiler) const;

private:
  void track(const Buffer* buffer, bool written);
  // Ordered by levels: files `command`, which reads `reads` and writes `writes`, at its level.
  void place(const std::vector<VkBuffer>& reads, const std::vector<VkBuffer>& writes,
             std::function<void(VkCommandBuffer)> command, const std::string& label);
  void defer(std::function<void(VkCommandBuffer)> command);
  void profile_mark(const std::string& label);
  // The first `count` queries of `pool`, in milliseconds after the first (waits for them); the
  // first's own time in milliseconds of device time into `first_ms` where given.
  std::vector<double> timestamps_ms(VkQueryPool pool, size_t count, double* first_ms = nullptr) const;
  VkDescriptorSet allocate_set(VkDescriptorSetLayout layout, uint32_t buffers);

  Device& device_;
  QueueRole role_ = QueueRole::Main;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> pools_;
  uint32_t pool_sets_left_ = 0, pool_buffers_left_ = 0;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  uint32_t max_timestamps_ = 0;
  std::vector<std::string> labels_;
  std::set<VkBuffer> written_since_barrier_, read_since_barrier_;
  std::vector<std::function<void(VkCommandBuffer)>> pending_; // written at finish()
  // Ordered by levels: the commands of each level; per buffer, one past the level of its last
  // write and one past the highest level that read it; the lowest level a command may take (an
  // explicit barrier raises it).
  bool by_levels_ = false;
  std::vector<std::vector<std::function<void(VkCommandBuffer)>>> levels_;
  std::vector<std::vector<std::string>> level_commands_; // Z123_PROFILE_LEVELS: labels per level
  std::map<VkBuffer, size_t> after_write_, after_read_;
  size_t floor_ = 0;
  bool finished_ = false;
  bool unbacked_ = false; // uses a buffer with no memory (Allocator::create_unbacked_buffer): never run
  size_t dispatches_ = 0, barriers_ = 0;
  std::vector<std::string> dispatch_labels_;
  VkQueryPool profile_queries_ = VK_NULL_HANDLE;
  std::vector<std::string> profile_labels_;    // interval i ends at query i + 1
  VkQueryPool level_queries_ = VK_NULL_HANDLE; // Z123_PROFILE_LEVELS
  std::vector<std::string> level_labels_;      // level i's interval ends at query i + 1
};

} // namespace z123::vk
