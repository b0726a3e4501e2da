#include "script_util.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>

namespace fs = std::filesystem;

namespace z123::test {

ShellResult shell(const std::string& command) {
  const std::string cmd = "cd " + shell_quoted(Z123_SOURCE_DIR) + " && { " + command + " ; } 2>&1";
  ShellResult r{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

fs::path test_dir() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path d = fs::temp_directory_path() /
               ("z123-" + std::string(info->test_suite_name()) + "-" + std::to_string(::getpid())) / info->name();
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string shell_quoted(const fs::path& p) {
  std::string s = "'";
  for (char c : p.string()) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return s + "'";
}

} // namespace z123::test
