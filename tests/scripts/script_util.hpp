// Running the project's scripts and tools from tests, as a user would from a shell.
#pragma once

#include <filesystem>
#include <string>

namespace z123::test {

struct ShellResult {
  int exit_code;   // -1 when the command did not exit normally
  std::string out; // stdout and stderr together
};

// Runs `command` with /bin/sh in the source tree (Z123_SOURCE_DIR), stderr merged into stdout.
ShellResult shell(const std::string& command);

// A fresh empty folder for the current test: <tmp>/z123-<suite>-<pid>/<test name>.
std::filesystem::path test_dir();

// Single-quoted for the shell.
std::string shell_quoted(const std::filesystem::path& p);

} // namespace z123::test
