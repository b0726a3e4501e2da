// A read-only memory mapping of a whole file. Weight files are gigabytes: mapping them lets the
// loader read tensors in place and lets the OS page them in lazily instead of copying up front.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>

namespace z123 {

// Reads every page of `bytes` (a mapping) into memory on all cores: the file system then has many
// reads in flight instead of the one a single faulting thread makes, and later passes over the
// data (converting weights) find it resident.
void prefetch_pages(std::span<const std::byte> bytes);

class MappedFile {
public:
  // Maps `path` read-only. Throws io_error (naming the path and the OS reason) if it cannot be
  // opened, is not a regular file, or cannot be mapped. An empty file yields an empty span.
  static MappedFile open(const std::filesystem::path& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  std::size_t size() const noexcept { return size_; }

private:
  MappedFile(const std::byte* data, std::size_t size) noexcept : data_(data), size_(size) {}
  void reset() noexcept;

  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

} // namespace z123
