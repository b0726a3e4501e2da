// Fault injection for tests: makes a chosen kind of call fail, so the error paths of opening,
// generating and decoding can be exercised on any device (a real out-of-memory or device loss
// cannot be provoked on demand). Each point counts its calls; an armed point fails its nth call
// from arming and, when sticky (as a lost device stays lost), every call after it.
//
// Two ways to arm: in-process with arm_fault() (engine tests), or with the environment variable
// Z123_FAULT="<point>:<nth>[:sticky]" (the GStreamer element, whose plugin carries its own copy of
// the engine): re-read at every check, so a test can set and clear it while a pipeline runs;
// changing it restarts the count. Unarmed, a check is one relaxed atomic load and a getenv.
#pragma once

#include <cstdint>
#include <string>

namespace z123 {

enum class FaultPoint {
  AllocateMemory, // vkAllocateMemory: VK_ERROR_OUT_OF_DEVICE_MEMORY
  CreateBuffer,   // vkCreateBuffer: VK_ERROR_OUT_OF_DEVICE_MEMORY
  CreatePipeline, // vkCreateComputePipelines: VK_ERROR_OUT_OF_DEVICE_MEMORY
  Submit,         // vkQueueSubmit: VK_ERROR_DEVICE_LOST
  Wait,           // vkWaitSemaphores: VK_ERROR_DEVICE_LOST
  FileRead,       // reading a weight file while loading: EIO
  Count
};

const char* fault_point_name(FaultPoint p); // "alloc", "buffer", "pipeline", "submit", "wait", "read"

// Arms `p` to fail its nth call from now (1 = the next one); nth 0 disarms it.
void arm_fault(FaultPoint p, uint64_t nth, bool sticky = false);
void disarm_faults();

// At each call site: whether this call must fail. Counts the call.
bool fault_fires(FaultPoint p);

} // namespace z123
