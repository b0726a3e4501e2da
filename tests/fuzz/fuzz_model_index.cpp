// libFuzzer target: model_index.json (parse_pipeline_index): components, ramping coefficients.
#include "fuzz_parse.hpp"
#include "z123/model/configs.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  z123::fuzz::run_parser(z123::parse_pipeline_index, std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
