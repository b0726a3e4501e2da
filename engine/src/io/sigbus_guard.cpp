#include "io/sigbus_guard.hpp"

#include <csetjmp>
#include <csignal>
#include <mutex>

namespace z123 {

namespace {

// The innermost guard of this thread. Initial-exec TLS: the signal handler reads it, and a
// dynamic TLS block (the engine inside a dlopen'd module: the GStreamer plugin) may be allocated
// on first access, which a handler must not do; and
// LeakSanitizer's exit check crashed reading the main thread's dynamic TLS of the GStreamer
// plugin after gst_deinit had unloaded it (GstFlush.FlushingSeekCancelsAndRestartsAtTheNewPosition,
// session 26, once the main thread happened to convert weights under a guard).
__attribute__((tls_model("initial-exec"))) thread_local sigjmp_buf* t_jump = nullptr;
struct sigaction g_previous {};
std::once_flag g_installed;

void on_sigbus(int sig, siginfo_t* info, void* context) {
  if (t_jump) siglongjmp(*t_jump, 1); // a guarded read: back into run_catching_sigbus
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) return g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    return g_previous.sa_handler(sig);
  }
  // Nobody else handles it: die of SIGBUS as the process would have without this handler.
  std::signal(SIGBUS, SIG_DFL);
  std::raise(SIGBUS);
}

void install() {
  struct sigaction sa {};
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER; // SA_NODEFER: a later fault is caught again after the jump
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, &g_previous);
}

} // namespace

bool run_catching_sigbus(const std::function<void()>& fn) {
  std::call_once(g_installed, install);
  sigjmp_buf jump;
  sigjmp_buf* const outer = t_jump;
  if (sigsetjmp(jump, 1) != 0) { // 1: the signal mask is restored by the jump
    t_jump = outer;
    return false;
  }
  t_jump = &jump;
  fn();
  t_jump = outer;
  return true;
}

} // namespace z123
