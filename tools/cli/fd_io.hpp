// The CLI's file I/O, interruptible by SIGINT / SIGTERM (see interrupt.hpp) and never leaving a
// half-written output:
//  * read_image_bytes: a whole input (a file, a FIFO, standard input, a slow pipe) read as a
//    stream, waiting in poll() on the input and the interrupt descriptor together, so a FIFO that
//    never gets a writer or a pipe that stalls half-way ends at once on a signal;
//  * StagedFiles: outputs are written to temporary files beside their targets and renamed into
//    place together only when all of them are complete (rename is atomic): an interrupted or
//    failed run leaves the old files, or none, but never a truncated image;
//  * write_stream: standard output, FIFOs and devices, which cannot be renamed onto.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "interrupt.hpp"
#include "z123/error.hpp"
#include "z123/image/codec.hpp"
#include "z123/image/image.hpp"

namespace z123cli {

// Thrown when a signal ends a wait (the caller exits with Interrupt::report()).
struct Interrupted {};

// Waits until `fd` is ready for `events` or a signal came (throws Interrupted).
inline void wait_for(int fd, short events) {
  for (;;) {
    pollfd p[2] = {{fd, events, 0}, {Interrupt::wake_fd(), POLLIN, 0}};
    int r = ::poll(p, 2, -1);
    if (Interrupt::requested()) throw Interrupted{};
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw z123::io_error(std::string("poll failed: ") + std::strerror(errno));
    if (p[0].revents) return; // ready, or POLLHUP / POLLERR: the read or write says which
  }
}

class Fd {
public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

private:
  int fd_;
};

// Reads all of `fd` (`name` in messages). Like z123::load_image: the signature is checked on the
// first bytes, so a large file that is no image fails before it is read, and no input may be
// larger than kMaxImageFileBytes.
inline std::vector<std::uint8_t> read_all(int fd, const std::string& name) {
  std::vector<std::uint8_t> bytes;
  bool checked = false;
  constexpr std::size_t kChunk = 1 << 20;
  for (;;) {
    wait_for(fd, POLLIN);
    const std::size_t have = bytes.size();
    if (have > z123::kMaxImageFileBytes)
      throw z123::io_error(name + ": larger than " + std::to_string(z123::kMaxImageFileBytes >> 20) +
                           " MiB, more than any image this program takes");
    bytes.resize(have + kChunk);
    ssize_t n = ::read(fd, bytes.data() + have, kChunk);
    bytes.resize(have + static_cast<std::size_t>(n > 0 ? n : 0));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue; // EAGAIN: a descriptor left non-blocking
      throw z123::io_error(name + ": read error (" + std::strerror(errno) + ")");
    }
    if (!checked && bytes.size() >= 16) {
      checked = true;
      if (z123::sniff_image_format(bytes) == z123::ImageFormat::Unknown) z123::decode_image(bytes, name); // throws
    }
  }
  return bytes;
}

// An input path's bytes; "-" is standard input.
inline std::vector<std::uint8_t> read_input_bytes(const std::string& path) {
  if (path == "-") return read_all(STDIN_FILENO, "<stdin>");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw z123::io_error(path + ": is a directory, not an image");
  // O_NONBLOCK: opening a FIFO for reading would otherwise block, out of poll's reach, until a
  // writer opens it. Linux then keeps poll() waiting (no POLLHUP) until a first writer came.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) throw z123::io_error(path + ": cannot open image (" + std::strerror(errno) + ")");
  return read_all(fd.get(), path);
}

// Writes all of `bytes` to `fd`, waiting in poll() (a slow pipe on standard output).
inline void write_all(int fd, const std::vector<std::uint8_t>& bytes, const std::string& name) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    wait_for(fd, POLLOUT);
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw z123::io_error(name + ": write failed (" + std::strerror(errno) + ")");
    }
    done += static_cast<std::size_t>(n);
  }
}

// Whether `path` exists and is something other than a regular file or a link to one (a FIFO, a
// device): such targets are written in place, not replaced.
inline bool is_stream_target(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

// Opens an existing FIFO or device for writing without blocking out of poll's reach: a FIFO
// without a reader refuses (ENXIO) until one comes, so this retries while watching for signals.
inline void write_stream(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  for (;;) {
    Fd fd(::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
    if (fd.get() >= 0) return write_all(fd.get(), bytes, path);
    if (errno != ENXIO) throw z123::io_error(path + ": cannot open for writing (" + std::strerror(errno) + ")");
    pollfd p{Interrupt::wake_fd(), POLLIN, 0};
    ::poll(&p, 1, 50);
    if (Interrupt::requested()) throw Interrupted{};
  }
}

// Files written beside their targets under temporary names, renamed into place by commit().
// Whatever was not committed is removed by the destructor (an error, an exception) or, when the
// process is ended by a signal, by the interrupt watcher.
class StagedFiles {
public:
  StagedFiles() = default;
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;
  ~StagedFiles() {
    for (const auto& f : files_) {
      ::unlink(f.temp.c_str());
      Interrupt::untrack(f.temp);
    }
  }

  void add(const std::filesystem::path& target, const std::vector<std::uint8_t>& bytes) {
    // Into the folder the name resolves to: renaming onto a symbolic link would replace the link.
    std::error_code ec;
    std::filesystem::path real =
        std::filesystem::is_symlink(target, ec) ? std::filesystem::weakly_canonical(target, ec) : target;
    if (ec) real = target;
    const std::string dir = real.parent_path().empty() ? "." : real.parent_path().string();
    Fd fd;
    std::string temp;
    for (int attempt = 0; fd.get() < 0; ++attempt) {
      temp = dir + "/." + real.filename().string() + "." + std::to_string(::getpid()) + "-" +
             std::to_string(counter_++) + ".part";
      Interrupt::track(temp); // before it exists: the watcher may end the process at any time
      // 0666 as any new file (the umask applies), unlike mkstemp's 0600.
      fd.reset(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
      if (fd.get() < 0) {
        const int err = errno;
        Interrupt::untrack(temp);
        if (err != EEXIST || attempt > 100)
          throw z123::io_error(target.string() + ": cannot create a file in '" + dir + "' (" + std::strerror(err) +
                               ")");
      }
    }
    files_.push_back({temp, real.string()});
    write_all(fd.get(), bytes, target.string());
    if (::close(fd.release()) != 0)
      throw z123::io_error(target.string() + ": writing failed (" + std::strerror(errno) + ")");
    if (Interrupt::requested()) throw Interrupted{};
  }

  // Renames every file into place; throws Interrupted (nothing renamed) after a signal.
  void commit() {
    Interrupt::atomically([&] {
      if (Interrupt::requested()) throw Interrupted{};
      for (auto& f : files_) {
        if (::rename(f.temp.c_str(), f.target.c_str()) != 0)
          throw z123::io_error(f.target + ": cannot move the finished file into place (" + std::strerror(errno) + ")");
        // Still tracked by the watcher until untracked below; a renamed temp name no longer exists.
      }
    });
    for (const auto& f : files_) Interrupt::untrack(f.temp);
    files_.clear();
  }

private:
  struct File {
    std::string temp, target;
  };
  std::vector<File> files_;
  int counter_ = 0;
};

} // namespace z123cli
