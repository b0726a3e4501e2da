// A program outside the project using the installed engine (pkg-config zero123pp-vk).
#include <z123/engine.hpp>

#include <cstdio>

int main() {
  auto poses = z123::view_poses();
  std::printf("views %zu, first azimuth %.0f\n", poses.size(), poses[0].azimuth_deg);
  return poses.size() == 6 ? 0 : 1;
}
