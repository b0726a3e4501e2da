// Which memory layout an engine uses (EngineOptions::memory): the normal one keeps every
// device-resident weight in VRAM for the whole run; the low-memory one lets the UNet's weights
// take turns with the conditioning and decoding activations in the same device memory, and
// copies them back from host memory before each image's sampling (vk::MemoryTurn).
#pragma once

#include <cstdint>

#include "z123/engine.hpp"
#include "z123/vk/instance.hpp"

namespace z123::pipeline {

// "auto" picks the low-memory layout on discrete GPUs whose largest device-local heap is under
// this: the normal layout peaks at ~3.5 GiB at 640x960, which leaves a 4 GB card nothing for the
// desktop, and a 6 GB card is the smallest that runs it with room to spare. Integrated GPUs and
// CPU devices keep the normal layout: their device memory is host memory, where the host copy
// of the weights would add to the footprint instead of moving it out of VRAM.
constexpr uint64_t kLowMemoryBelowHeapBytes = 6ull << 30;

bool use_low_memory(MemoryLayout layout, const vk::DeviceInfo& device);

} // namespace z123::pipeline
