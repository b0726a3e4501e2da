// Writes safetensors files from named float32 / float16 arrays. Used by tests (synthetic model
// folders, corrupt files) and by reference tooling that dumps intermediate tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace z123 {

class SafetensorsWriter {
public:
  // Each add copies the data. Throws invalid_argument on a duplicate or reserved name
  // ("__metadata__"), a negative dimension, or a value count that does not match the shape.
  void add_f32(const std::string& name, std::vector<std::int64_t> shape, std::span<const float> values);
  // `bits` are IEEE binary16 bit patterns (see z123/half.hpp).
  void add_f16(const std::string& name, std::vector<std::int64_t> shape, std::span<const std::uint16_t> bits);
  // Unchecked: any dtype string and any byte count. Lets tests build files the reader must
  // reject (unsupported dtypes, length mismatches).
  void add_raw(const std::string& name, std::string dtype, std::vector<std::int64_t> shape,
               std::span<const std::byte> bytes);

  void set_metadata(const std::string& key, const std::string& value);

  // The complete file image: length prefix, JSON header padded with spaces to a multiple of 8
  // (so data starts 8-aligned, as the reference writer does), then the data in insertion order.
  std::vector<std::byte> serialize() const;
  // Writes serialize() to `path`; io_error naming the path on failure.
  void write(const std::filesystem::path& path) const;

  std::size_t tensor_count() const { return entries_.size(); }

private:
  struct Entry {
    std::string name;
    std::string dtype;
    std::vector<std::int64_t> shape;
    std::vector<std::byte> bytes;
  };
  void add_checked(const std::string& name, std::string dtype, std::vector<std::int64_t> shape,
                   std::span<const std::byte> bytes, std::size_t count);
  void check_name(const std::string& name) const;

  std::vector<Entry> entries_;
  std::map<std::string, std::string> metadata_;
};

} // namespace z123
