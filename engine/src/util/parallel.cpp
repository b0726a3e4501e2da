#include "z123/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "z123/tuning.hpp"

namespace z123 {

unsigned worker_threads() {
  static const unsigned n = [] {
    if (const unsigned want = threads_from_environment()) return want;
    return std::max(1u, std::thread::hardware_concurrency());
  }();
  return n;
}

void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  if (n == 0) return;
  const std::size_t threads = std::min<std::size_t>(n, worker_threads());
  if (threads == 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (std::size_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break; // no more threads to be had: the ones running (and this one) do the rest
    }
  }
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

void parallel_ranges(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& fn) {
  if (n == 0) return;
  const std::size_t g = std::max<std::size_t>(grain, 1);
  const std::size_t ranges = std::min<std::size_t>((n + g - 1) / g, worker_threads());
  const std::size_t per = (n + ranges - 1) / ranges;
  parallel_for(ranges, [&](std::size_t r) {
    const std::size_t begin = r * per, end = std::min(n, begin + per);
    if (begin < end) fn(begin, end);
  });
}

} // namespace z123
