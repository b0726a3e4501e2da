// This process's resources, for the leak checks of the state-cycle and soak tests.
#pragma once

#include <dirent.h>

#include <cstring>
#include <fstream>
#include <string>

namespace z123::test {

// Entries of a /proc/self folder: open file descriptors (fd) or threads (task); -1 if unreadable.
inline int count_entries(const char* dir) {
  DIR* d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n - (std::strcmp(dir, "/proc/self/fd") == 0 ? 1 : 0); // the DIR's own descriptor
}

// Resident set size in KiB (VmRSS of /proc/self/status); -1 if unreadable.
inline long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

} // namespace z123::test
