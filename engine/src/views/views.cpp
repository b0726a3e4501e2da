#include "z123/views.hpp"

#include <cstdio>
#include <cstring>

namespace z123 {

TileLayout tiling_layout(Tiling tiling) {
  switch (tiling) {
  case Tiling::k3x2: return {3, 2};
  case Tiling::k6x1: return {6, 1};
  case Tiling::k1x6: return {1, 6};
  case Tiling::k2x3: break;
  }
  return {kViewColumns, kViewRows}; // the model's own grid
}

const char* tiling_name(Tiling tiling) {
  switch (tiling) {
  case Tiling::k3x2: return "3x2";
  case Tiling::k6x1: return "6x1";
  case Tiling::k1x6: return "1x6";
  case Tiling::k2x3: break;
  }
  return "2x3";
}

void write_tiled(const Image& grid, int view_size, TileLayout layout, std::uint8_t* dst, std::size_t stride) {
  const std::size_t view_row = static_cast<std::size_t>(view_size) * 4;
  for (int i = 0; i < kViewCount; ++i) {
    const ViewRect src = view_rect(i, kViewColumns * view_size, kViewRows * view_size);
    const int dst_x = (i % layout.columns) * view_size, dst_y = (i / layout.columns) * view_size;
    for (int y = 0; y < view_size; ++y)
      std::memcpy(dst + static_cast<std::size_t>(dst_y + y) * stride + static_cast<std::size_t>(dst_x) * 4,
                  grid.row(src.y + y) + static_cast<std::size_t>(src.x) * 4, view_row);
  }
}

Image tiled(const Image& grid, Tiling tiling) {
  if (grid.channels != 4 || grid.width % kViewColumns || grid.height % kViewRows ||
      grid.width / kViewColumns != grid.height / kViewRows)
    throw invalid_argument("tiled: expected an RGBA grid of " + std::to_string(kViewColumns) + " x " +
                           std::to_string(kViewRows) + " square views, got " + std::to_string(grid.width) + "x" +
                           std::to_string(grid.height) + " with " + std::to_string(grid.channels) + " channels");
  const int view = grid.width / kViewColumns;
  const TileLayout layout = tiling_layout(tiling);
  Image out = Image::blank(layout.columns * view, layout.rows * view, 4);
  write_tiled(grid, view, layout, out.pixels.data(), out.row_bytes());
  return out;
}

Image view_image(const Image& grid, int index) {
  if (index < 0 || index >= kViewCount)
    throw invalid_argument("view index " + std::to_string(index) + ", expected 0.." + std::to_string(kViewCount - 1));
  const ViewRect r = view_rect(index, grid.width, grid.height);
  Image out = Image::blank(r.width, r.height, grid.channels);
  for (int y = 0; y < r.height; ++y)
    std::memcpy(out.row(y), grid.row(r.y + y) + static_cast<std::size_t>(r.x) * grid.channels, out.row_bytes());
  return out;
}

std::string view_label(int index) {
  const ViewPose p = view_poses()[static_cast<std::size_t>(index)];
  char buf[96];
  std::snprintf(buf, sizeof buf, "View %d: azimuth %g\xC2\xB0, elevation %g\xC2\xB0", index + 1, p.azimuth_deg,
                p.elevation_deg);
  return buf;
}

std::string view_file_name(const std::string& name, int index) {
  return name + "_view" + std::to_string(index) + ".png";
}

std::string views_json(const std::string& name) {
  const auto poses = view_poses();
  std::string json = "{\n  \"image\": \"" + name + ".png\",\n  \"views\": [\n";
  for (int i = 0; i < kViewCount; ++i) {
    char head[64], tail[160];
    std::snprintf(head, sizeof head, "    {\"index\": %d, \"file\": \"", i);
    std::snprintf(tail, sizeof tail,
                  "\", \"row\": %d, \"column\": %d, \"azimuth_deg\": %g, \"elevation_deg\": %g, \"fov_deg\": %g}%s\n",
                  i / kViewColumns, i % kViewColumns, poses[size_t(i)].azimuth_deg, poses[size_t(i)].elevation_deg,
                  poses[size_t(i)].fov_deg, i + 1 < kViewCount ? "," : "");
    json += head + view_file_name(name, i) + tail; // the name is not cut at any length
  }
  json += "  ]\n}\n";
  return json;
}

} // namespace z123
