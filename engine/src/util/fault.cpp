#include "z123/fault.hpp"

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace z123 {

namespace {

struct Arm {
  std::atomic<uint64_t> nth{0}; // 0: unarmed
  std::atomic<uint64_t> calls{0};
  std::atomic<bool> sticky{false};
};

std::array<Arm, static_cast<size_t>(FaultPoint::Count)> g_arms;
std::atomic<bool> g_any_armed{false};

// The environment's Z123_FAULT as last seen, and the point it armed (guarded by g_env_mutex).
std::mutex g_env_mutex;
std::string g_env_seen;
std::atomic<bool> g_env_active{false}; // g_env_seen is not empty

void arm(FaultPoint p, uint64_t nth, bool sticky) {
  Arm& a = g_arms[static_cast<size_t>(p)];
  a.calls.store(0);
  a.sticky.store(sticky);
  a.nth.store(nth);
  if (nth) g_any_armed.store(true);
}

// Applies a changed Z123_FAULT: clears what the previous value armed, arms the new one.
void follow_environment() {
  const char* env = std::getenv("Z123_FAULT");
  const std::string now = env ? env : "";
  std::lock_guard<std::mutex> lock(g_env_mutex);
  if (now == g_env_seen) return;
  g_env_seen = now;
  g_env_active.store(!now.empty());
  for (size_t i = 0; i < g_arms.size(); ++i) arm(static_cast<FaultPoint>(i), 0, false);
  if (now.empty()) return;
  const size_t c1 = now.find(':');
  if (c1 == std::string::npos) return; // malformed: nothing armed
  const std::string name = now.substr(0, c1);
  const size_t c2 = now.find(':', c1 + 1);
  const uint64_t nth =
      std::strtoull(now.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1).c_str(), nullptr, 10);
  const bool sticky = c2 != std::string::npos && now.substr(c2 + 1) == "sticky";
  for (size_t i = 0; i < g_arms.size(); ++i)
    if (name == fault_point_name(static_cast<FaultPoint>(i))) arm(static_cast<FaultPoint>(i), nth, sticky);
}

} // namespace

const char* fault_point_name(FaultPoint p) {
  switch (p) {
  case FaultPoint::AllocateMemory: return "alloc";
  case FaultPoint::CreateBuffer: return "buffer";
  case FaultPoint::CreatePipeline: return "pipeline";
  case FaultPoint::Submit: return "submit";
  case FaultPoint::Wait: return "wait";
  case FaultPoint::FileRead: return "read";
  case FaultPoint::Count: break;
  }
  return "?";
}

void arm_fault(FaultPoint p, uint64_t nth, bool sticky) { arm(p, nth, sticky); }

void disarm_faults() {
  for (size_t i = 0; i < g_arms.size(); ++i) arm(static_cast<FaultPoint>(i), 0, false);
}

bool fault_fires(FaultPoint p) {
  if (std::getenv("Z123_FAULT") || g_env_active.load(std::memory_order_relaxed)) follow_environment();
  if (!g_any_armed.load(std::memory_order_relaxed)) return false;
  Arm& a = g_arms[static_cast<size_t>(p)];
  const uint64_t nth = a.nth.load();
  if (nth == 0) return false;
  const uint64_t call = ++a.calls;
  return call == nth || (call > nth && a.sticky.load());
}

} // namespace z123
