#include "settings.hpp"

#include <cstdlib>

namespace z123gst {

std::string Settings::default_model_dir() {
  const char* env = std::getenv("Z123_MODEL_DIR");
  return env && *env ? env : "models/zero123plus-v1.2";
}

namespace {

// The nicks are what gst-launch lines use (tiling=3x2, sampler=euler), so they match the
// command-line tool's spellings.
GType register_enum(const char* name, const GEnumValue* values) { return g_enum_register_static(name, values); }

} // namespace

GType tiling_get_type() {
  static const GEnumValue values[] = {
      {int(Tiling::k2x3), "2 columns x 3 rows (640x960 at view-size 320; the model's own layout)",
       z123::tiling_name(Tiling::k2x3)},
      {int(Tiling::k3x2), "3 columns x 2 rows", z123::tiling_name(Tiling::k3x2)},
      {int(Tiling::k6x1), "6 views side by side", z123::tiling_name(Tiling::k6x1)},
      {int(Tiling::k1x6), "6 views stacked vertically", z123::tiling_name(Tiling::k1x6)},
      {0, nullptr, nullptr}};
  static GType type = register_enum("GstZero123ppTiling", values);
  return type;
}

GType drop_policy_get_type() {
  static const GEnumValue values[] = {
      {int(DropPolicy::KeepNewest), "Live sources: a new frame replaces the one waiting (lowest delay)", "keep-newest"},
      {int(DropPolicy::KeepOldest), "Live sources: new frames are dropped while one is waiting", "keep-oldest"},
      {int(DropPolicy::Block), "Never drop: block the source until the worker is free, even when live", "block"},
      {0, nullptr, nullptr}};
  static GType type = register_enum("GstZero123ppDropPolicy", values);
  return type;
}

GType sampler_get_type() {
  static const GEnumValue values[] = {
      {int(Sampler::EulerAncestral), "Euler ancestral (the official pipeline's sampler)",
       z123::option_name(Sampler::EulerAncestral)},
      {int(Sampler::Euler), "Euler (deterministic given the start noise)", z123::option_name(Sampler::Euler)},
      {0, nullptr, nullptr}};
  static GType type = register_enum("GstZero123ppSampler", values);
  return type;
}

GType spacing_get_type() {
  static const GEnumValue values[] = {
      {int(Spacing::Trailing), "Trailing (the official examples)", z123::option_name(Spacing::Trailing)},
      {int(Spacing::Linspace), "Linspace", z123::option_name(Spacing::Linspace)},
      {int(Spacing::Leading), "Leading", z123::option_name(Spacing::Leading)},
      {0, nullptr, nullptr}};
  static GType type = register_enum("GstZero123ppSpacing", values);
  return type;
}

GType memory_mode_get_type() {
  static const GEnumValue values[] = {
      {int(MemoryLayout::Auto), "Low on discrete GPUs with less than 6 GiB, else normal",
       z123::option_name(MemoryLayout::Auto)},
      {int(MemoryLayout::Normal), "Every weight stays in GPU memory", z123::option_name(MemoryLayout::Normal)},
      {int(MemoryLayout::Low), "The UNet's weights share GPU memory with conditioning and decoding",
       z123::option_name(MemoryLayout::Low)},
      {0, nullptr, nullptr}};
  static GType type = register_enum("GstZero123ppMemory", values);
  return type;
}

} // namespace z123gst
