// SIGINT and SIGTERM end any wait of the zero123pp CLI with exit status 130, a message, and no
// output file (not even a temporary one): reading a FIFO that never gets a writer, a pipe that
// delivers half an image and stalls, and a generation in progress.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "cli_util.hpp"
#include "support/golden.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

extern char** environ;

namespace {

// The CLI with `args`, standard input from `stdin_fd` (or inherited when -1), standard output and
// error into `log`.
pid_t spawn_cli(const std::vector<std::string>& args, int stdin_fd, const fs::path& log) {
  std::vector<std::string> all{Z123_CLI};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (stdin_fd >= 0) posix_spawn_file_actions_adddup2(&fa, stdin_fd, STDIN_FILENO);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &fa, &attr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  return pid;
}

// Waits up to `limit` for `pid` to exit: its exit status, or -1 (then it is killed) when it did
// not exit in time or was killed by a signal.
int wait_exit(pid_t pid, std::chrono::milliseconds limit) {
  const auto t0 = Clock::now();
  int status = 0;
  while (Clock::now() - t0 < limit) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(10ms);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

// Polls `ready` every 10 ms for up to 20 s (the machine may be loaded).
template <typename Fn>
bool eventually(Fn ready) {
  for (auto t0 = Clock::now(); Clock::now() - t0 < 20s; std::this_thread::sleep_for(10ms))
    if (ready()) return true;
  return false;
}

// The CLI blocks SIGINT and SIGTERM first thing (its watcher thread takes them): before that a
// signal would kill it the default way, which is not what these tests are about.
bool handles_signals(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("SigBlk:", 0) == 0) {
      unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
      return (mask >> (SIGINT - 1) & 1) && (mask >> (SIGTERM - 1) & 1);
    }
  return false;
}

// Whether `pid` has `path` open.
bool has_open(pid_t pid, const fs::path& path) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code ec2;
    if (fs::read_symlink(e.path(), ec2) == path) return true;
  }
  return false;
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

// A fresh, empty folder for one test's output.
fs::path out_dir(const std::string& name) {
  fs::path d = z123::test::cli_temp_dir() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

const char* signal_name(int sig) { return sig == SIGINT ? "SIGINT" : "SIGTERM"; }

// Sends `sig`, then expects exit 130 within `limit`, the message, and an empty output folder.
void expect_interrupted(pid_t pid, int sig, std::chrono::milliseconds limit, const fs::path& log, const fs::path& dir,
                        const std::string& phase) {
  const auto t0 = Clock::now();
  ASSERT_EQ(kill(pid, sig), 0);
  const int code = wait_exit(pid, limit + 10s);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::string text = read_text(log);
  EXPECT_EQ(code, 130) << signal_name(sig) << "\n" << text;
  EXPECT_LT(s, std::chrono::duration<double>(limit).count()) << signal_name(sig) << ": took " << s << " s";
  EXPECT_NE(text.find(std::string("interrupted by ") + signal_name(sig) + " while " + phase), std::string::npos)
      << text;
  EXPECT_TRUE(entries(dir).empty()) << signal_name(sig) << ": left " << entries(dir).front();
}

} // namespace

// Nobody ever opens the FIFO for writing: the CLI waits for its first byte.
TEST(CliSignals, FifoThatNeverGetsDataEndsWith130) {
  for (int sig : {SIGINT, SIGTERM}) {
    fs::path dir = out_dir(std::string("fifo-") + signal_name(sig));
    fs::path fifo = z123::test::cli_temp_dir() / (std::string("input-") + signal_name(sig) + ".png");
    fs::remove(fifo);
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    fs::path log = z123::test::cli_temp_dir() / "fifo.log";
    pid_t pid = spawn_cli(
        {"--model", z123::test::tiny_model_dir().string(), "--quiet", fifo.string(), (dir / "out.png").string()}, -1,
        log);
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(eventually([&] { return handles_signals(pid) && has_open(pid, fifo); })) << read_text(log);
    std::this_thread::sleep_for(200ms); // into poll()
    expect_interrupted(pid, sig, 2s, log, dir, "reading the input");
    fs::remove(fifo);
  }
}

// Standard input is a pipe that delivers the first half of a PNG, then nothing (the writer stays
// open): the CLI has read what there was and waits for the rest.
TEST(CliSignals, PipeThatStallsHalfWayEndsWith130) {
  std::ifstream png(z123::test::golden_dir() / "pipeline_input.png", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(png)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 1000u);
  for (int sig : {SIGINT, SIGTERM}) {
    fs::path dir = out_dir(std::string("pipe-") + signal_name(sig));
    int p[2];
    ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
    fs::path log = z123::test::cli_temp_dir() / "pipe.log";
    pid_t pid = spawn_cli(
        {"--model", z123::test::tiny_model_dir().string(), "--quiet", "-", (dir / "out.png").string()}, p[0], log);
    ASSERT_GT(pid, 0);
    close(p[0]);
    const size_t half = std::min<size_t>(bytes.size() / 2, 32768); // within the pipe's buffer
    ASSERT_EQ(write(p[1], bytes.data(), half), static_cast<ssize_t>(half));
    ASSERT_TRUE(eventually([&] {
      int unread = -1;
      return handles_signals(pid) && ioctl(p[1], FIONREAD, &unread) == 0 && unread == 0;
    })) << read_text(log);
    std::this_thread::sleep_for(200ms);
    expect_interrupted(pid, sig, 2s, log, dir, "reading the input");
    close(p[1]);
  }
}

// Mid-generation (200 steps, far more than the test waits for): the engine stops before its next
// step, or the watcher ends the process after its grace period; either way no output is written.
TEST(CliSignals, GenerationInProgressEndsWith130AndNoOutput) {
  fs::path dir = out_dir("generating");
  fs::path views = dir / "views";
  fs::path log = z123::test::cli_temp_dir() / "generating.log";
  pid_t pid = spawn_cli({"--model", z123::test::tiny_model_dir().string(), "--steps", "200", "--size", "128x192",
                         "--views-dir", views.string(), (z123::test::golden_dir() / "pipeline_input.png").string(),
                         (dir / "out.png").string()},
                        -1, log);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(eventually([&] { return read_text(log).find("loaded in") != std::string::npos; })) << read_text(log);
  std::this_thread::sleep_for(500ms);
  // The views folder was made by the output checks; nothing may be in it.
  expect_interrupted(pid, SIGINT, 4s, log, views, "generating the views");
  EXPECT_FALSE(fs::exists(dir / "out.png"));
  for (const auto& name : entries(dir)) EXPECT_EQ(name, "views");
}
