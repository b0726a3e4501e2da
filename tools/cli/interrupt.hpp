// SIGINT / SIGTERM handling for the zero123pp CLI: any wait ends with exit status 130, a one-line
// message and no partial output file.
//
// Design. The signals are blocked in every thread (install() runs first in main, before any thread
// exists, and threads inherit the mask) and received by one watcher thread with sigwaitinfo, so
// nothing runs in signal-handler context and no system call of the engine or of a library is ever
// interrupted half-way (no EINTR surprises in code we do not own). The watcher
//  * sets cancel_flag() (the engine checks it before every denoising step) and makes wake_fd()
//    readable (an eventfd that stays readable: the CLI's reads and writes poll it together with
//    the input or output descriptor, so a FIFO that never gets data or a stalled pipe ends at once);
//  * ends the process itself (removing the temporary files registered with track(), then _exit)
//    when the main thread cannot notice in time: at once outside a Cooperative scope (loading the
//    model, creating the Vulkan device: Engine::open has no cancellation point), after kGrace
//    inside one (a denoising step, the VAE decode or closing the engine can take a while on slow
//    devices), and at once on a second signal (the user insisted).
// The signals stay blocked for the process's lifetime: it never executes other programs.
#pragma once

#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace z123cli {

constexpr int kInterruptedExit = 130;

class Interrupt {
public:
  // How long a cooperative phase gets to wind down before the watcher ends the process.
  static constexpr int kGraceSeconds = 2;

  // Blocks SIGINT and SIGTERM in the calling thread (and so in every thread started after it) and
  // starts the watcher. Call once, first thing in main.
  static void install() {
    State& s = state();
    s.wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    sigset_t set = signals();
    ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread(watch).detach();
  }

  static const std::atomic<bool>& cancel_flag() { return state().cancel; }
  static bool requested() { return state().cancel.load(); }
  // Readable (POLLIN) once a signal arrived; never drained.
  static int wake_fd() { return state().wake; }

  // Marks a phase whose code checks requested() / wake_fd() often enough to stop by itself;
  // `what` names it in the message ("reading the input").
  class Cooperative {
  public:
    explicit Cooperative(const char* what) : previous_(state().phase.exchange(what)) { ++state().cooperative; }
    ~Cooperative() {
      --state().cooperative;
      state().phase.store(previous_);
    }
    Cooperative(const Cooperative&) = delete;
    Cooperative& operator=(const Cooperative&) = delete;

  private:
    const char* previous_;
  };
  // Names a phase that cannot stop by itself (the watcher ends the process when a signal comes).
  class Phase {
  public:
    explicit Phase(const char* what) : previous_(state().phase.exchange(what)) {}
    ~Phase() { state().phase.store(previous_); }
    Phase(const Phase&) = delete;
    Phase& operator=(const Phase&) = delete;

  private:
    const char* previous_;
  };

  // Temporary files the watcher removes before ending the process.
  static void track(const std::string& path) {
    std::lock_guard<std::mutex> lock(state().files_mutex);
    state().files.insert(path);
  }
  static void untrack(const std::string& path) {
    std::lock_guard<std::mutex> lock(state().files_mutex);
    state().files.erase(path);
  }
  // Runs `fn` (renaming finished files into place) so that the watcher cannot end the process
  // half-way through it: either every tracked file is removed, or `fn` ran completely.
  template <typename Fn>
  static void atomically(Fn&& fn) {
    std::lock_guard<std::mutex> lock(state().files_mutex);
    fn();
  }

  // Prints "zero123pp: interrupted by SIGINT while <phase>" once (the watcher or main, whichever
  // comes first) and returns the exit status.
  static int report() {
    print_once();
    return kInterruptedExit;
  }

private:
  struct State {
    std::atomic<bool> cancel{false};
    std::atomic<int> signal{0}, cooperative{0};
    std::atomic<const char*> phase{"starting"};
    std::atomic<const char*> interrupted_phase{nullptr}; // phase when the signal came (unwinding changes `phase`)
    std::atomic<bool> printed{false};
    int wake = -1;
    std::mutex files_mutex;
    std::set<std::string> files;
  };
  // Never destroyed: the detached watcher may still use it while the process exits.
  static State& state() {
    static State* s = new State;
    return *s;
  }
  static sigset_t signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    return set;
  }

  static void print_once() {
    State& s = state();
    if (s.printed.exchange(true)) return;
    const int sig = s.signal.load();
    // A progress line may be half-way on a terminal.
    std::string msg = std::string(::isatty(STDERR_FILENO) ? "\n" : "") + "zero123pp: interrupted by " +
                      (sig == SIGTERM ? "SIGTERM" : "SIGINT") + " while " +
                      (s.interrupted_phase.load() ? s.interrupted_phase.load() : s.phase.load()) + "\n";
    // write(2), not stdio: the main thread may be inside fprintf when the watcher gets here.
    [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, msg.data(), msg.size());
  }

  [[noreturn]] static void end_process() {
    State& s = state();
    print_once();
    s.files_mutex.lock(); // held until _exit: no rename can start after the files are removed
    for (const auto& f : s.files) ::unlink(f.c_str());
    // _exit, not exit: the main thread still uses the engine and the static objects.
    ::_exit(kInterruptedExit);
  }

  static void watch() {
    State& s = state();
    const sigset_t set = signals();
    for (;;) {
      int sig;
      if (!s.cancel.load()) {
        sig = ::sigwaitinfo(&set, nullptr);
      } else {
        timespec grace{kGraceSeconds, 0};
        sig = ::sigtimedwait(&set, nullptr, &grace);
        if (sig < 0 && errno == EAGAIN) end_process(); // the cooperative phase did not end in time
      }
      if (sig < 0) continue;              // EINTR
      if (s.cancel.load()) end_process(); // a second signal
      s.signal.store(sig);
      s.interrupted_phase.store(s.phase.load());
      s.cancel.store(true);
      const std::uint64_t one = 1;
      [[maybe_unused]] ssize_t n = ::write(s.wake, &one, sizeof one);
      if (s.cooperative.load() == 0) end_process();
    }
  }
};

} // namespace z123cli
