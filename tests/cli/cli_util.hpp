// Helpers shared by the CLI tests: running the zero123pp binary as a user would, and a scratch
// folder per test process.
#pragma once

#include <filesystem>
#include <string>

namespace z123::test {

struct CliResult {
  int exit_code;   // -1 when the process did not exit normally (killed by a signal)
  std::string out; // stdout + stderr
};

// Runs the CLI through the shell (so pipes and redirections are those of a user's shell).
CliResult cli(const std::string& args);
// The same for another program of this build.
CliResult run_program(const std::string& program, const std::string& args);

// A folder for this test process's files (created once).
std::filesystem::path cli_temp_dir();

// `p` single-quoted for the shell.
std::string q(const std::filesystem::path& p);

} // namespace z123::test
