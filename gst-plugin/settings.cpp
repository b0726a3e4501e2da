#include "settings.hpp"

#include <cstdlib>

namespace z123gst {

Layout tiling_layout(Tiling tiling) {
  switch (tiling) {
  case Tiling::k3x2: return {3, 2};
  case Tiling::k6x1: return {6, 1};
  case Tiling::k1x6: return {1, 6};
  case Tiling::k2x3: break;
  }
  return {2, 3};
}

const char* sampler_name(Sampler sampler) { return sampler == Sampler::Euler ? "euler" : "euler_a"; }

const char* spacing_name(Spacing spacing) {
  switch (spacing) {
  case Spacing::Linspace: return "linspace";
  case Spacing::Leading: return "leading";
  case Spacing::Trailing: break;
  }
  return "trailing";
}

const char* memory_mode_name(MemoryMode mode) {
  switch (mode) {
  case MemoryMode::Normal: return "normal";
  case MemoryMode::Low: return "low";
  case MemoryMode::Auto: break;
  }
  return "auto";
}

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
      {int(Tiling::k2x3), "2 columns x 3 rows (640x960 at view-size 320; the model's own layout)", "2x3"},
      {int(Tiling::k3x2), "3 columns x 2 rows", "3x2"},
      {int(Tiling::k6x1), "6 views side by side", "6x1"},
      {int(Tiling::k1x6), "6 views stacked vertically", "1x6"},
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
      {int(Sampler::EulerAncestral), "Euler ancestral (the official pipeline's sampler)", "euler_a"},
      {int(Sampler::Euler), "Euler (deterministic given the start noise)", "euler"},
      {0, nullptr, nullptr}};
  static GType type = register_enum("GstZero123ppSampler", values);
  return type;
}

GType spacing_get_type() {
  static const GEnumValue values[] = {{int(Spacing::Trailing), "Trailing (the official examples)", "trailing"},
                                      {int(Spacing::Linspace), "Linspace", "linspace"},
                                      {int(Spacing::Leading), "Leading", "leading"},
                                      {0, nullptr, nullptr}};
  static GType type = register_enum("GstZero123ppSpacing", values);
  return type;
}

GType memory_mode_get_type() {
  static const GEnumValue values[] = {
      {int(MemoryMode::Auto), "Low on discrete GPUs with less than 6 GiB, else normal", "auto"},
      {int(MemoryMode::Normal), "Every weight stays in GPU memory", "normal"},
      {int(MemoryMode::Low), "The UNet's weights share GPU memory with conditioning and decoding", "low"},
      {0, nullptr, nullptr}};
  static GType type = register_enum("GstZero123ppMemory", values);
  return type;
}

} // namespace z123gst
