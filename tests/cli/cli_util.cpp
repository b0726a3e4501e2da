#include "cli_util.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>

namespace z123::test {

CliResult cli(const std::string& args) { return run_program(Z123_CLI, args); }

CliResult run_program(const std::string& program, const std::string& args) {
  std::string cmd = program + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  CliResult r{-1, ""};
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::filesystem::path cli_temp_dir() {
  static std::filesystem::path d = [] {
    std::filesystem::path p = std::filesystem::temp_directory_path() / ("z123-cli-" + std::to_string(::getpid()));
    std::filesystem::create_directories(p);
    return p;
  }();
  return d;
}

std::string q(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

} // namespace z123::test
