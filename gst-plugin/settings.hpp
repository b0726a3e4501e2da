// The element's properties as plain C++ values, plus the GLib enum types that gst-inspect shows
// for the enumerated ones. The element keeps one Settings under its object lock; the threads that
// need values copy them out (snapshot) so the lock is never held across engine work.
#pragma once

#include <glib-object.h>

#include <cstdint>
#include <string>

#include "z123/engine.hpp"
#include "z123/views.hpp"

namespace z123gst {

// How the six views are laid out in the output frame: the engine's tilings (z123/views.hpp, shared
// with the GIMP plug-ins); tiling_get_type() below registers them for the property.
using z123::Tiling;
using Layout = z123::TileLayout;
using z123::tiling_layout;
// What happens to frames that arrive from a LIVE source while one is already waiting for the
// worker. Non-live sources always block (nothing is dropped) whatever this says.
enum class DropPolicy : int { KeepNewest = 0, KeepOldest = 1, Block = 2 };
// The sampler, the timestep spacing, the memory layout and the precision are the engine's own
// enums (z123/engine.hpp); their GLib types below register those values with the engine's names
// as nicks, so gst-launch lines spell them as the command line does (sampler=euler).
using z123::MemoryLayout;
using z123::Precision;
using z123::Sampler;
using z123::Spacing;

// Limits shared by the property specs and the checks. The engine needs output sides that are
// multiples of 64 and at most 4096, and the grid it renders is 3 views tall, hence 1344 = 21 * 64.
inline constexpr int kViewSizeMin = 64, kViewSizeMax = 1344, kViewSizeDefault = 320, kViewSizeMultiple = 64;
inline constexpr int kStepsMin = 1, kStepsMax = 200, kStepsDefault = 28;
inline constexpr double kGuidanceDefault = 4.0;

struct Settings {
  std::string model = default_model_dir();
  std::string device;                    // "" = best device, a number = index, else a name substring
  Precision precision = Precision::Auto; // a string property: auto | f16 | f32
  MemoryLayout memory = MemoryLayout::Auto;
  int steps = kStepsDefault;
  double guidance_scale = kGuidanceDefault;
  std::uint64_t seed = 0;
  bool random_seed = false;
  Sampler sampler = Sampler::EulerAncestral;
  Spacing spacing = Spacing::Trailing;
  int view_size = kViewSizeDefault;
  Tiling tiling = Tiling::k2x3;
  DropPolicy drop_policy = DropPolicy::KeepNewest;

  // $Z123_MODEL_DIR when set, else models/zero123plus-v1.2 (as the command-line tool).
  static std::string default_model_dir();
};

GType tiling_get_type();
GType drop_policy_get_type();
GType sampler_get_type();
GType spacing_get_type();
GType memory_mode_get_type();

} // namespace z123gst
