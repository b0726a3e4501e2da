#include "z123/vk/profiler.hpp"

#include <algorithm>
#include <vector>

#include "z123/tuning.hpp"

namespace z123::vk {

bool Profiler::requested() {
  static const bool on = profiling_from_environment();
  return on;
}

bool Profiler::levels_requested() {
  static const bool on = level_profiling_from_environment();
  return on;
}

void Profiler::add(const std::string& label, double ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = entries_[label];
  e.calls++;
  e.total_ms += ms;
}

void Profiler::add_pass(uint64_t submission, double start_ms, double end_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (have_pass_ && submission == last_submission_ + 1) {
    const double gap = std::max(0.0, start_ms - last_end_ms_);
    gaps_++;
    gap_total_ms_ += gap;
    gap_longest_ms_ = std::max(gap_longest_ms_, gap);
  }
  have_pass_ = true;
  last_submission_ = submission;
  last_end_ms_ = end_ms;
}

uint64_t Profiler::pass_gaps() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return gaps_;
}

double Profiler::pass_gap_ms() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return gap_total_ms_;
}

uint64_t Profiler::calls(const std::string& label) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(label);
  return it == entries_.end() ? 0 : it->second.calls;
}

size_t Profiler::labels() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

bool Profiler::empty() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.empty();
}

void Profiler::print(std::FILE* out, const std::string& title) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<std::string, Entry>> rows(entries_.begin(), entries_.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.total_ms > b.second.total_ms; });
  double total = 0;
  for (const auto& r : rows) total += r.second.total_ms;
  std::fprintf(out, "== Z123_PROFILE: %s, %.3f ms of GPU time in %zu kernel/grid kinds\n", title.c_str(), total,
               rows.size());
  std::fprintf(out, "%10s %6s %8s %10s  %s\n", "total ms", "share", "calls", "mean us", "kernel [grid]");
  double shown = 0;
  uint64_t rest_calls = 0;
  for (const auto& [label, e] : rows) {
    if (total > 0 && shown >= 0.99 * total) {
      rest_calls += e.calls;
      continue;
    }
    shown += e.total_ms;
    std::fprintf(out, "%10.3f %5.1f%% %8llu %10.1f  %s\n", e.total_ms, total > 0 ? 100 * e.total_ms / total : 0.0,
                 static_cast<unsigned long long>(e.calls), 1000 * e.total_ms / static_cast<double>(e.calls),
                 label.c_str());
  }
  if (rest_calls)
    std::fprintf(out, "%10.3f %5.1f%% %8llu %10s  (the rest)\n", total - shown, 100 * (total - shown) / total,
                 static_cast<unsigned long long>(rest_calls), "");
  if (gaps_)
    std::fprintf(out,
                 "== main queue idle between consecutive level-ordered passes: %.3f ms in %llu gaps "
                 "(mean %.1f us, longest %.1f us)\n",
                 gap_total_ms_, static_cast<unsigned long long>(gaps_),
                 1000 * gap_total_ms_ / static_cast<double>(gaps_), 1000 * gap_longest_ms_);
}

} // namespace z123::vk
