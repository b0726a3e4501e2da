// libFuzzer target: the input is one JSON document, fed to every config parser (a mutation that
// turns a UNet config into something a VAE parser chokes on is found here; fuzz_model_index and
// fuzz_preprocessor focus on one parser each with its own seeds).
#include "fuzz_parse.hpp"
#include "z123/model/configs.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using z123::fuzz::run_parser;
  run_parser(z123::parse_pipeline_index, text);
  run_parser(z123::parse_scheduler_config, text);
  run_parser(z123::parse_unet_config, text);
  run_parser(z123::parse_vae_config, text);
  run_parser(z123::parse_clip_text_config, text);
  run_parser(z123::parse_clip_vision_config, text);
  run_parser(z123::parse_preprocessor_config, text);
  return 0;
}
