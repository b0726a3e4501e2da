#include "z123/io/mapped_file.hpp"

#include "io/sigbus_guard.hpp"

#include "z123/error.hpp"
#include "z123/parallel.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace z123 {

namespace {

// Closes the descriptor on every exit path; the mapping stays valid after close().
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

std::string os_reason(int err) { return std::strerror(err); }

} // namespace

void prefetch_pages(std::span<const std::byte> bytes) {
  if (bytes.empty()) return;
  const long page_size = ::sysconf(_SC_PAGESIZE);
  const std::size_t page = page_size > 0 ? static_cast<std::size_t>(page_size) : 4096;
  // Advice is only a hint (and needs a page-aligned start): failures are ignored.
  const auto start = reinterpret_cast<std::uintptr_t>(bytes.data()) / page * page;
  ::madvise(reinterpret_cast<void*>(start), bytes.size() + (reinterpret_cast<std::uintptr_t>(bytes.data()) - start),
            MADV_WILLNEED);
  constexpr std::size_t kChunk = 8u << 20;
  const std::size_t chunks = (bytes.size() + kChunk - 1) / kChunk;
  parallel_for(chunks, [&](std::size_t c) {
    const std::size_t begin = c * kChunk, end = std::min(bytes.size(), begin + kChunk);
    // A file that shrank under its mapping faults here (SIGBUS): the pages are then simply not
    // prefetched, and the guarded read that follows reports it (sigbus_guard.hpp).
    run_catching_sigbus([&] {
      unsigned sum = 0;
      for (std::size_t i = begin; i < end; i += page) sum += static_cast<unsigned>(bytes[i]);
      sum += static_cast<unsigned>(bytes[end - 1]);
      // Keeps the reads from being optimized away.
      volatile unsigned sink = sum;
      (void)sink;
    });
  });
}

MappedFile MappedFile::open(const std::filesystem::path& path) {
  const std::string name = path.string();
  FdGuard fd{::open(name.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0) {
    const int err = errno;
    throw io_error(name + ": cannot open: " + os_reason(err));
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) {
    const int err = errno;
    throw io_error(name + ": cannot stat: " + os_reason(err));
  }
  if (!S_ISREG(st.st_mode)) throw io_error(name + ": is not a regular file");
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size == 0) return MappedFile(); // mmap rejects length 0; an empty span says the same thing
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    throw io_error(name + ": cannot map " + std::to_string(size) + " bytes: " + os_reason(err));
  }
  return MappedFile(static_cast<const std::byte*>(p), size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { reset(); }

void MappedFile::reset() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

} // namespace z123
