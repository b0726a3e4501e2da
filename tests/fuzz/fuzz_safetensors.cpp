// libFuzzer target: the whole input is a safetensors file image. The reader must either accept it
// (and then every tensor must be readable within bounds) or throw z123::Error; anything else (a
// crash, a sanitizer report, another exception type) is a bug.
#include "z123/error.hpp"
#include "z123/io/safetensors.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>(data[i]);
  z123::SafetensorsOptions options;
  options.skip_non_float_suffixes = {"position_ids"};
  try {
    const z123::SafetensorsFile file = z123::SafetensorsFile::from_bytes(std::move(bytes), "fuzz", options);
    for (const z123::TensorView& t : file.tensors()) {
      if (file.find(t.name) != &t) __builtin_trap(); // index must agree with the list
      if (t.numel > (1u << 16)) continue;            // conversions are linear; keep runs fast
      (void)z123::to_f32(t);
      (void)z123::to_f16(t);
    }
  } catch (const z123::Error&) {
    // Rejected with a typed error: the expected outcome for most inputs.
  }
  return 0;
}
