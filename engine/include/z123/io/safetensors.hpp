// Reader for the safetensors weight format: 8-byte little-endian header length N, N bytes of JSON
// describing every tensor ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, optional
// "__metadata__": {str: str}}), then the raw data area. The file is memory-mapped and the header
// is validated completely before any tensor is handed out, so later code can trust every span.
// Only the float formats the model ships in (F32, F16, BF16) are accepted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace z123 {

enum class StoredDType { F32, F16, BF16 };

const char* stored_dtype_name(StoredDType dtype); // safetensors spelling: "F32", "F16", "BF16"
std::size_t stored_dtype_size(StoredDType dtype); // bytes per element

// Headers larger than this are treated as corrupt (real ones are well under 1 MiB); the bound
// keeps a garbage length prefix from making us parse gigabytes of JSON.
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100ull << 20;

// One tensor of an open file. `bytes` points into the file's storage and stays valid as long as
// the SafetensorsFile it came from (moving the file object does not invalidate it).
struct TensorView {
  std::string name;
  StoredDType dtype = StoredDType::F32;
  std::vector<std::int64_t> shape;
  std::uint64_t numel = 0;
  std::uint64_t data_begin = 0; // offset inside the data area (after the header)
  std::span<const std::byte> bytes;
};

// A non-float tensor that was validated and deliberately left out of tensors().
struct SkippedTensor {
  std::string name;
  std::string dtype; // safetensors spelling, e.g. "I64"
  std::vector<std::int64_t> shape;
};

struct SafetensorsOptions {
  // Non-float tensors whose name ends with one of these suffixes are validated (shape, offsets,
  // overlap) and then skipped instead of failing the open: CLIP checkpoints written by older
  // transformers versions carry an int64 "embeddings.position_ids" buffer. Any other tensor whose
  // dtype is not F32/F16/BF16 is an `unsupported` error.
  std::vector<std::string> skip_non_float_suffixes;
};

class SafetensorsFile {
public:
  // Maps and validates a file. Throws io_error (cannot open/map), format_error (corrupt header,
  // naming the file, the tensor and expected vs found) or unsupported (dtype other than F32, F16,
  // BF16, naming the tensor and its dtype).
  static SafetensorsFile open(const std::filesystem::path& path, const SafetensorsOptions& options = {});

  // Same validation on an in-memory image (tests, fuzzing). `source` names it in messages.
  static SafetensorsFile from_bytes(std::vector<std::byte> bytes, std::string source,
                                    const SafetensorsOptions& options = {});

  SafetensorsFile(SafetensorsFile&&) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;
  ~SafetensorsFile();

  const std::string& source() const noexcept; // path (or name) used in messages
  std::uint64_t file_size() const noexcept;
  std::uint64_t header_size() const noexcept; // N, the JSON length
  std::uint64_t data_size() const noexcept;   // file_size - 8 - N

  // Tensors in data-area order (ascending data_begin, then name).
  const std::vector<TensorView>& tensors() const noexcept;
  const TensorView* find(std::string_view name) const noexcept;
  // Like find(), but a missing tensor is a model_error naming the file and the tensor.
  const TensorView& at(std::string_view name) const;
  const std::map<std::string, std::string>& metadata() const noexcept;
  const std::vector<SkippedTensor>& skipped() const noexcept;
  // Brings the whole file into memory on all cores (prefetch_pages) before tensors are read.
  void prefetch() const;

  struct Impl; // opaque; public only so the parser's free helpers can fill it

private:
  explicit SafetensorsFile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Element conversion into caller-owned buffers; `out.size()` must equal `tensor.numel`
// (invalid_argument otherwise, naming the tensor). Data may be unaligned in the file; these
// functions handle that. To f32: exact for every source dtype. To f16: F16 copied, F32 and BF16
// rounded to nearest-even (overflow -> inf), the same as PyTorch's .half().
void convert_to_f32(const TensorView& tensor, std::span<float> out);
void convert_to_f16(const TensorView& tensor, std::span<std::uint16_t> out);
// The same for a slice: out[i] = element first + i * stride (invalid_argument, naming the tensor,
// if that runs past its end). The weight loader converts slices of one tensor on several cores
// and, with a stride, reorders convolution weights on the way.
void convert_range_to_f32(const TensorView& tensor, std::uint64_t first, std::uint64_t stride, std::span<float> out);
void convert_range_to_f16(const TensorView& tensor, std::uint64_t first, std::uint64_t stride,
                          std::span<std::uint16_t> out);

// Convenience: allocate and convert.
std::vector<float> to_f32(const TensorView& tensor);
std::vector<std::uint16_t> to_f16(const TensorView& tensor);

// "[320, 4, 3, 3]" — the spelling used in every shape message.
std::string format_shape(std::span<const std::int64_t> shape);

} // namespace z123
