// Data-parallel loops on the host's cores, for work done while a model opens (touching mapped
// weight files, converting fp32 weights to fp16): the driver and the GPU wait on it, and a
// machine with a GPU usually has cores to spare.
#pragma once

#include <cstddef>
#include <functional>

namespace z123 {

// Threads parallel_for uses: hardware_concurrency(), at least 1; Z123_THREADS=N overrides it.
unsigned worker_threads();

// Calls fn(i) for every i in [0, n), spread over up to worker_threads() threads (the caller is
// one of them); items are taken one at a time, so uneven items balance. Returns when every item
// is done. If calls throw, the rest of the items are skipped and the first exception is
// rethrown here.
void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn);

// Calls fn(begin, end) over consecutive ranges that cover [0, n), at most one range per worker
// thread and none shorter than `grain` (except the last), so small jobs stay on the caller's
// thread: for per-image host work (resampling rows) where a thread's start costs about as much as
// a few rows.
void parallel_ranges(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& fn);

} // namespace z123
