#include "vk/shader_table.hpp"

namespace z123::vk {

const EmbeddedShader* find_shader(std::string_view name) {
  for (const EmbeddedShader* s = kEmbeddedShaders; s->name; ++s)
    if (name == s->name) return s;
  return nullptr;
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
