#include "z123/io/safetensors.hpp"

#include "io/json_util.hpp"
#include "io/sigbus_guard.hpp"
#include "z123/error.hpp"
#include "z123/fault.hpp"
#include "z123/half.hpp"
#include "z123/io/mapped_file.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host would need byte swapping");

namespace z123 {

using nlohmann::json;

const char* stored_dtype_name(StoredDType dtype) {
  switch (dtype) {
  case StoredDType::F32: return "F32";
  case StoredDType::F16: return "F16";
  case StoredDType::BF16: return "BF16";
  }
  return "?";
}

std::size_t stored_dtype_size(StoredDType dtype) { return dtype == StoredDType::F32 ? 4 : 2; }

std::string format_shape(std::span<const std::int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

struct SafetensorsFile::Impl {
  MappedFile mapping;           // storage when opened from disk
  std::vector<std::byte> owned; // storage when built from memory
  std::span<const std::byte> bytes;
  std::string source;
  std::uint64_t header_size = 0;
  std::vector<TensorView> tensors;
  std::map<std::string, std::size_t, std::less<>> index;
  std::map<std::string, std::string> metadata;
  std::vector<SkippedTensor> skipped;
};

namespace {

std::optional<StoredDType> parse_dtype(const std::string& s) {
  if (s == "F32") return StoredDType::F32;
  if (s == "F16") return StoredDType::F16;
  if (s == "BF16") return StoredDType::BF16;
  return std::nullopt;
}

// Element sizes of the other safetensors dtypes, needed to validate a tensor we skip.
std::optional<std::size_t> other_dtype_size(const std::string& s) {
  static const std::pair<const char*, std::size_t> kSizes[] = {{"BOOL", 1},    {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1},
                                                               {"F8_E5M2", 1}, {"I16", 2}, {"U16", 2}, {"I32", 4},
                                                               {"U32", 4},     {"I64", 8}, {"U64", 8}, {"F64", 8}};
  for (const auto& [name, size] : kSizes) {
    if (s == name) return size;
  }
  return std::nullopt;
}

bool skippable(const std::string& name, const SafetensorsOptions& options) {
  for (const std::string& suffix : options.skip_non_float_suffixes) {
    if (name.ends_with(suffix)) return true;
  }
  return false;
}

// A validated header entry; `skipped_dtype` is set for a non-float tensor we leave out.
struct Entry {
  TensorView view;
  std::uint64_t byte_len = 0;
  std::optional<std::string> skipped_dtype;
};

// Reads a non-negative JSON integer; `what` names the field in the message.
std::uint64_t read_uint(const json& v, const std::string& where, const std::string& what) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    throw format_error(where + ": " + what + " is " + v.dump() + ", expected a non-negative integer");
  }
  throw format_error(where + ": " + what + " must be a non-negative integer, found " + json_util::describe(v));
}

void parse_metadata(const json& meta, SafetensorsFile::Impl& impl) {
  if (!meta.is_object()) {
    throw format_error(impl.source + ": '__metadata__' must be an object of strings, found " +
                       json_util::describe(meta));
  }
  for (const auto& [key, value] : meta.items()) {
    if (!value.is_string()) {
      throw format_error(impl.source + ": '__metadata__' key '" + key + "': expected string value, found " +
                         json_util::describe(value));
    }
    impl.metadata.emplace(key, value.get<std::string>());
  }
}

Entry parse_entry(const std::string& name, const json& entry, std::uint64_t data_size, const std::string& source,
                  const SafetensorsOptions& options) {
  const std::string where = source + ": tensor '" + name + "'";
  if (!entry.is_object()) {
    throw format_error(where + ": entry must be an object, found " + json_util::describe(entry));
  }
  Entry e;
  TensorView& t = e.view;
  t.name = name;

  auto dtype_it = entry.find("dtype");
  if (dtype_it == entry.end()) throw format_error(where + ": missing 'dtype'");
  if (!dtype_it->is_string()) {
    throw format_error(where + ": 'dtype' must be a string, found " + json_util::describe(*dtype_it));
  }
  const std::string dtype_str = dtype_it->get<std::string>();
  std::size_t elem_size = 0;
  if (const std::optional<StoredDType> dtype = parse_dtype(dtype_str)) {
    t.dtype = *dtype;
    elem_size = stored_dtype_size(*dtype);
  } else if (const auto other = other_dtype_size(dtype_str); other && skippable(name, options)) {
    e.skipped_dtype = dtype_str;
    elem_size = *other;
  } else {
    throw unsupported(where + " has dtype '" + dtype_str + "', which is not supported (expected F32, F16 or BF16)");
  }

  auto shape_it = entry.find("shape");
  if (shape_it == entry.end()) throw format_error(where + ": missing 'shape'");
  if (!shape_it->is_array()) {
    throw format_error(where + ": 'shape' must be a list of integers, found " + json_util::describe(*shape_it));
  }
  std::uint64_t numel = 1;
  for (std::size_t i = 0; i < shape_it->size(); ++i) {
    const std::string what = "shape[" + std::to_string(i) + "]";
    const std::uint64_t dim = read_uint((*shape_it)[i], where, what);
    if (dim > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw format_error(where + ": " + what + " = " + std::to_string(dim) + " is too large");
    }
    if (__builtin_mul_overflow(numel, dim, &numel)) {
      throw format_error(where + ": element count of shape " + shape_it->dump() + " overflows 64 bits");
    }
    t.shape.push_back(static_cast<std::int64_t>(dim));
  }
  t.numel = numel;
  std::uint64_t byte_len = 0;
  if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(elem_size), &byte_len)) {
    throw format_error(where + ": byte size of shape " + format_shape(t.shape) + " overflows 64 bits");
  }

  auto off_it = entry.find("data_offsets");
  if (off_it == entry.end()) throw format_error(where + ": missing 'data_offsets'");
  if (!off_it->is_array() || off_it->size() != 2) {
    throw format_error(where + ": 'data_offsets' must be [begin, end], found " + json_util::describe(*off_it));
  }
  const std::uint64_t begin = read_uint((*off_it)[0], where, "data_offsets[0]");
  const std::uint64_t end = read_uint((*off_it)[1], where, "data_offsets[1]");
  if (begin > end) {
    throw format_error(where + ": data_offsets begin " + std::to_string(begin) + " > end " + std::to_string(end));
  }
  if (end > data_size) {
    throw format_error(where + ": data_offsets end " + std::to_string(end) + " is past the end of the data area (" +
                       std::to_string(data_size) + " bytes; file truncated?)");
  }
  if (end - begin != byte_len) {
    throw format_error(where + ": data_offsets span " + std::to_string(end - begin) + " bytes but shape " +
                       format_shape(t.shape) + " x " + dtype_str + " needs " + std::to_string(byte_len) + " bytes");
  }
  t.data_begin = begin;
  e.byte_len = byte_len;
  return e;
}

// Two tensors sharing bytes would alias silently; reject it like the reference implementation.
// Checks every entry, skipped ones included.
void check_no_overlap(std::vector<Entry>& entries, const std::string& source) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.view.data_begin != b.view.data_begin) return a.view.data_begin < b.view.data_begin;
    return a.view.name < b.view.name;
  });
  const Entry* furthest = nullptr; // entry whose range ends last so far
  auto end_of = [](const Entry& e) { return e.view.data_begin + e.byte_len; };
  for (const Entry& e : entries) {
    if (e.byte_len == 0) continue;
    if (furthest != nullptr && e.view.data_begin < end_of(*furthest)) {
      throw format_error(source + ": tensors '" + furthest->view.name + "' [" +
                         std::to_string(furthest->view.data_begin) + ", " + std::to_string(end_of(*furthest)) +
                         ") and '" + e.view.name + "' [" + std::to_string(e.view.data_begin) + ", " +
                         std::to_string(end_of(e)) + ") overlap in the data area");
    }
    if (furthest == nullptr || end_of(e) > end_of(*furthest)) furthest = &e;
  }
}

void parse_file(SafetensorsFile::Impl& impl, const SafetensorsOptions& options) {
  const std::span<const std::byte> bytes = impl.bytes;
  const std::uint64_t size = bytes.size();
  if (size < 8) {
    throw format_error(impl.source + ": file is " + std::to_string(size) +
                       " bytes, too short for the 8-byte safetensors header length");
  }
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  if (n > kMaxSafetensorsHeaderBytes) {
    throw format_error(impl.source + ": header length " + std::to_string(n) + " bytes exceeds the limit of " +
                       std::to_string(kMaxSafetensorsHeaderBytes) + " bytes (corrupt file or not safetensors)");
  }
  if (n > size - 8) {
    throw format_error(impl.source + ": header length " + std::to_string(n) + " bytes runs past the end of the file (" +
                       std::to_string(size) + " bytes, so at most " + std::to_string(size - 8) + " bytes of header)");
  }
  impl.header_size = n;
  const std::uint64_t data_size = size - 8 - n;
  const std::string_view text(reinterpret_cast<const char*>(bytes.data() + 8), n);
  const json header = json_util::parse(text, impl.source + " (safetensors header)");
  if (!header.is_object()) {
    throw format_error(impl.source + ": safetensors header must be a JSON object, found " +
                       json_util::describe(header));
  }

  std::vector<Entry> entries;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      parse_metadata(entry, impl);
      continue;
    }
    entries.push_back(parse_entry(name, entry, data_size, impl.source, options));
  }
  check_no_overlap(entries, impl.source);

  const std::byte* data = bytes.data() + 8 + n;
  for (Entry& e : entries) {
    if (e.skipped_dtype) {
      impl.skipped.push_back({e.view.name, *e.skipped_dtype, e.view.shape});
      continue;
    }
    e.view.bytes = std::span<const std::byte>(data + e.view.data_begin, e.byte_len);
    impl.tensors.push_back(std::move(e.view));
  }
  for (std::size_t i = 0; i < impl.tensors.size(); ++i) impl.index.emplace(impl.tensors[i].name, i);
}

void check_out_size(const TensorView& t, std::size_t out_size) {
  if (out_size != t.numel) {
    throw invalid_argument("tensor '" + t.name + "': output buffer has " + std::to_string(out_size) +
                           " elements, the tensor has " + std::to_string(t.numel));
  }
}

// bfloat16 is the top half of a float32, so widening is exact.
float bf16_to_f32(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Element i of a 16-bit tensor; memcpy because data offsets need not be aligned.
std::uint16_t load_u16(const std::byte* p, std::size_t i) {
  std::uint16_t v;
  std::memcpy(&v, p + 2 * i, 2);
  return v;
}

} // namespace

SafetensorsFile::SafetensorsFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;
SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&&) noexcept = default;
SafetensorsFile::~SafetensorsFile() = default;

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path, const SafetensorsOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->source = path.string();
  impl->mapping = MappedFile::open(path);
  impl->bytes = impl->mapping.bytes();
  parse_file(*impl, options);
  return SafetensorsFile(std::move(impl));
}

SafetensorsFile SafetensorsFile::from_bytes(std::vector<std::byte> bytes, std::string source,
                                            const SafetensorsOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->source = std::move(source);
  impl->owned = std::move(bytes);
  impl->bytes = impl->owned;
  parse_file(*impl, options);
  return SafetensorsFile(std::move(impl));
}

const std::string& SafetensorsFile::source() const noexcept { return impl_->source; }
std::uint64_t SafetensorsFile::file_size() const noexcept { return impl_->bytes.size(); }
std::uint64_t SafetensorsFile::header_size() const noexcept { return impl_->header_size; }
std::uint64_t SafetensorsFile::data_size() const noexcept { return impl_->bytes.size() - 8 - impl_->header_size; }
const std::vector<TensorView>& SafetensorsFile::tensors() const noexcept { return impl_->tensors; }
const std::map<std::string, std::string>& SafetensorsFile::metadata() const noexcept { return impl_->metadata; }
const std::vector<SkippedTensor>& SafetensorsFile::skipped() const noexcept { return impl_->skipped; }

void SafetensorsFile::prefetch() const { prefetch_pages(impl_->bytes); }

const TensorView* SafetensorsFile::find(std::string_view name) const noexcept {
  auto it = impl_->index.find(name);
  return it == impl_->index.end() ? nullptr : &impl_->tensors[it->second];
}

const TensorView& SafetensorsFile::at(std::string_view name) const {
  const TensorView* t = find(name);
  if (t == nullptr) {
    throw model_error(impl_->source + ": tensor '" + std::string(name) + "' not found");
  }
  return *t;
}

namespace {

void check_range(const TensorView& tensor, std::uint64_t first, std::uint64_t stride, std::size_t count) {
  if (count == 0) return;
  if (stride == 0 || first >= tensor.numel || (count - 1) > (tensor.numel - 1 - first) / stride)
    throw invalid_argument("tensor '" + tensor.name + "': " + std::to_string(count) + " elements from " +
                           std::to_string(first) + " every " + std::to_string(stride) + " run past its " +
                           std::to_string(tensor.numel) + " elements");
}

// The plain copies behind convert_range_to_f32 / _f16 (which guard them, see read_guarded).
void copy_range_to_f32(const TensorView& tensor, std::uint64_t first, std::uint64_t stride, std::span<float> out) {
  const std::byte* p = tensor.bytes.data();
  const std::size_t n = out.size();
  switch (tensor.dtype) {
  case StoredDType::F32:
    if (stride == 1) {
      if (n) std::memcpy(out.data(), p + 4 * first, n * sizeof(float));
    } else {
      for (std::size_t i = 0; i < n; ++i) std::memcpy(&out[i], p + 4 * (first + i * stride), 4);
    }
    return;
  case StoredDType::F16:
    for (std::size_t i = 0; i < n; ++i) out[i] = f16_to_f32(load_u16(p, first + i * stride));
    return;
  case StoredDType::BF16:
    for (std::size_t i = 0; i < n; ++i) out[i] = bf16_to_f32(load_u16(p, first + i * stride));
    return;
  }
}

void copy_range_to_f16(const TensorView& tensor, std::uint64_t first, std::uint64_t stride,
                       std::span<std::uint16_t> out) {
  const std::byte* p = tensor.bytes.data();
  const std::size_t n = out.size();
  switch (tensor.dtype) {
  case StoredDType::F32:
    for (std::size_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, p + 4 * (first + i * stride), 4);
      out[i] = f32_to_f16(f);
    }
    return;
  case StoredDType::F16:
    if (stride == 1) {
      if (n) std::memcpy(out.data(), p + 2 * first, n * 2);
    } else {
      for (std::size_t i = 0; i < n; ++i) out[i] = load_u16(p, first + i * stride);
    }
    return;
  case StoredDType::BF16:
    for (std::size_t i = 0; i < n; ++i) out[i] = f32_to_f16(bf16_to_f32(load_u16(p, first + i * stride)));
    return;
  }
}

// Reads through the SIGBUS guard: a weight file truncated while it loads gives an Io error
// naming the tensor, not a crash. Also the FileRead fault-injection point (z123/fault.hpp).
void read_guarded(const TensorView& tensor, const std::function<void()>& copy) {
  if (fault_fires(FaultPoint::FileRead))
    throw io_error("reading tensor '" + tensor.name + "' failed: Input/output error (injected fault)");
  if (!run_catching_sigbus(copy))
    throw io_error("reading tensor '" + tensor.name +
                   "' failed: its file shrank or was replaced while the model was loading (SIGBUS); "
                   "do not change the model folder while it is being opened");
}

} // namespace

void convert_range_to_f32(const TensorView& tensor, std::uint64_t first, std::uint64_t stride, std::span<float> out) {
  check_range(tensor, first, stride, out.size());
  read_guarded(tensor, [&] { copy_range_to_f32(tensor, first, stride, out); });
}

void convert_range_to_f16(const TensorView& tensor, std::uint64_t first, std::uint64_t stride,
                          std::span<std::uint16_t> out) {
  check_range(tensor, first, stride, out.size());
  read_guarded(tensor, [&] { copy_range_to_f16(tensor, first, stride, out); });
}

void convert_to_f32(const TensorView& tensor, std::span<float> out) {
  check_out_size(tensor, out.size());
  convert_range_to_f32(tensor, 0, 1, out);
}

void convert_to_f16(const TensorView& tensor, std::span<std::uint16_t> out) {
  check_out_size(tensor, out.size());
  convert_range_to_f16(tensor, 0, 1, out);
}

std::vector<float> to_f32(const TensorView& tensor) {
  std::vector<float> out(tensor.numel);
  convert_to_f32(tensor, out);
  return out;
}

std::vector<std::uint16_t> to_f16(const TensorView& tensor) {
  std::vector<std::uint16_t> out(tensor.numel);
  convert_to_f16(tensor, out);
  return out;
}

} // namespace z123
