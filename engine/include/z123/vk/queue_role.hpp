// Which of a device's queues a recording runs on (vk::Device): Main, the compute queue every
// program uses, or Side, a second compute queue for work that runs beside the main queue's (the
// step's reference pass one step ahead, Tuning::reference_queue).
#pragma once

#include <cstdint>

namespace z123::vk {

enum class QueueRole : uint8_t { Main, Side };

// A submission waits until the timeline of the queue with this role reaches this value.
struct TimelineWait {
  QueueRole role;
  uint64_t value;
};

} // namespace z123::vk
