// Shader variant names as the kernels write them: "<family>_f16" / "<family>_f32"
// (shaders/variants/*.cmake). A family written out as a literal is checked against the declared
// variants when the engine compiles (ShaderFamily's constructor is consteval): a mistyped name is
// a compile error, not an Unsupported error on some device at run time. Names composed at run
// time (tilings, fragment shapes, head sizes) go through composed_variant(), and
// tests/vk/test_shader_names.cpp checks every composition the dispatchers can make.
#pragma once

#include <string>
#include <string_view>

#include "z123/tensor.hpp"
#include "z123_declared_shaders.hpp"

namespace z123::kernels {

// Whether some declared variant is `family` followed by a dtype suffix.
consteval bool declared_family(std::string_view family) {
  for (std::string_view name : vk::generated::kDeclaredShaderNames)
    for (std::string_view dtype : {"_f16", "_f32"})
      if (name.size() == family.size() + dtype.size() && name.starts_with(family) && name.ends_with(dtype)) return true;
  return false;
}

class ShaderFamily {
public:
  // Not a constant expression, hence a compile error, unless the family is declared.
  consteval ShaderFamily(const char* family) : family_(family) {
    if (!declared_family(family_))
      throw "no shader variant <family>_f16 or <family>_f32 is declared in shaders/variants";
  }
  const char* c_str() const { return family_; }

private:
  const char* family_;
};

// "<family>_f16" / "<family>_f32" of a family written out in the source.
std::string variant(ShaderFamily family, DType t);
// The same for a family composed at run time (not checked before the pipeline is looked up).
std::string composed_variant(const std::string& family, DType t);

} // namespace z123::kernels
