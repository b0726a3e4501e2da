// The names of the engine's enumerated options (engine.hpp), one table per option, used both ways.
#include <array>
#include <string>
#include <utility>

#include "z123/engine.hpp"

namespace z123 {

namespace {

template <typename T, size_t N>
using Names = std::array<std::pair<T, const char*>, N>;

constexpr Names<Precision, 3> kPrecisions{
    {{Precision::Auto, "auto"}, {Precision::F16, "f16"}, {Precision::F32, "f32"}}};
constexpr Names<MemoryLayout, 3> kMemoryLayouts{
    {{MemoryLayout::Auto, "auto"}, {MemoryLayout::Normal, "normal"}, {MemoryLayout::Low, "low"}}};
constexpr Names<Sampler, 2> kSamplers{{{Sampler::EulerAncestral, "euler_a"}, {Sampler::Euler, "euler"}}};
constexpr Names<Spacing, 3> kSpacings{
    {{Spacing::Trailing, "trailing"}, {Spacing::Linspace, "linspace"}, {Spacing::Leading, "leading"}}};

// Each option's table, found by the option's type.
const auto& names_of(Precision) { return kPrecisions; }
const auto& names_of(MemoryLayout) { return kMemoryLayouts; }
const auto& names_of(Sampler) { return kSamplers; }
const auto& names_of(Spacing) { return kSpacings; }

template <typename T, size_t N>
const char* name_in(const Names<T, N>& names, T value) {
  for (const auto& [v, n] : names)
    if (v == value) return n;
  return "?";
}

template <typename T, size_t N>
T parse_in(const Names<T, N>& names, const std::string& option, const std::string& name) {
  std::string accepted;
  for (size_t i = 0; i < N; ++i) {
    if (name == names[i].second) return names[i].first;
    accepted += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(names[i].second);
  }
  throw invalid_argument(option + " must be " + accepted + ", not '" + name + "'");
}

} // namespace

const char* option_name(Precision value) { return name_in(names_of(value), value); }
const char* option_name(MemoryLayout value) { return name_in(names_of(value), value); }
const char* option_name(Sampler value) { return name_in(names_of(value), value); }
const char* option_name(Spacing value) { return name_in(names_of(value), value); }

template <typename T>
T parse_option(const std::string& option, const std::string& name) {
  return parse_in(names_of(T{}), option, name);
}
template Precision parse_option<Precision>(const std::string&, const std::string&);
template MemoryLayout parse_option<MemoryLayout>(const std::string&, const std::string&);
template Sampler parse_option<Sampler>(const std::string&, const std::string&);
template Spacing parse_option<Spacing>(const std::string&, const std::string&);

} // namespace z123
