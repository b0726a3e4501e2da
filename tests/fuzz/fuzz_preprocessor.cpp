// libFuzzer target: feature_extractor_*/preprocessor_config.json (parse_preprocessor_config):
// the nested and legacy integer forms of size / crop_size, mean / std lists and scalars.
#include "fuzz_parse.hpp"
#include "z123/model/configs.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  z123::fuzz::run_parser(z123::parse_preprocessor_config, std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
