#include "vk/shader_table.hpp"

#include <string>

namespace z123::vk {

const EmbeddedShader* find_shader(std::string_view name) {
  for (const EmbeddedShader* s = kEmbeddedShaders; s->name; ++s)
    if (name == s->name) return s;
  return nullptr;
}

const DeclaredShader* find_declared(std::string_view name) {
  for (const DeclaredShader* d = kDeclaredShaders; d->name; ++d)
    if (name == d->name) return d;
  return nullptr;
}

namespace {

// Whether this build's shader compiler had the GLSL feature (cmake/Shaders.cmake probes it).
bool feature_built(std::string_view feature) {
  return feature.empty() || (feature == "NV_COOPMAT" && Z123_GLSL_NV_COOPMAT) ||
         (feature == "KHR_COOPMAT" && Z123_GLSL_KHR_COOPMAT) || (feature == "NV_COOPMAT2" && Z123_GLSL_NV_COOPMAT2);
}

} // namespace

std::string missing_shader_reason(std::string_view name) {
  const std::string quoted = "shader variant '" + std::string(name) + "'";
  const DeclaredShader* d = find_declared(name);
  if (!d) return quoted + " is not declared in shaders/variants (a mistyped name)";
  if (!feature_built(d->feature))
    return quoted + " is not in this build (the shader compiler lacked " + d->feature + " at build time)";
  if (d->bench_only)
    return quoted + " exists for measurements only and is built with -DZ123_BENCH_VARIANTS=ON (docs/tuning.md)";
  return quoted + " is declared but not embedded (a build bug)";
}

uint64_t embedded_shaders_hash() {
  static const uint64_t hash = [] {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&](unsigned char c) { h = (h ^ c) * 1099511628211ull; };
    for (const EmbeddedShader* s = kEmbeddedShaders; s->name; ++s) {
      for (const char* c = s->name; *c; ++c) mix(static_cast<unsigned char>(*c));
      for (unsigned long i = 0; i < s->size; ++i) mix(s->bytes[i]);
    }
    return h;
  }();
  return hash;
}

} // namespace z123::vk
