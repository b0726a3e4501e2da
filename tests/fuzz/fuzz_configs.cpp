// libFuzzer target: the input is one JSON document, fed to every config parser. Each parser must
// return a config or throw z123::Error; an escaping nlohmann exception (a type check we forgot),
// a crash or a sanitizer report is a bug.
#include "z123/error.hpp"
#include "z123/model/configs.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {

template <class Parse>
void run(Parse parse, std::string_view text) {
  try {
    (void)parse(text, "fuzz.json");
  } catch (const z123::Error&) {
    // Rejected with a typed error: fine.
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  run(z123::parse_pipeline_index, text);
  run(z123::parse_scheduler_config, text);
  run(z123::parse_unet_config, text);
  run(z123::parse_vae_config, text);
  run(z123::parse_clip_text_config, text);
  run(z123::parse_clip_vision_config, text);
  run(z123::parse_preprocessor_config, text);
  return 0;
}
