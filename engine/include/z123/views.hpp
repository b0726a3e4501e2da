// The six generated views as front ends hand them out: the tilings of the views in one frame (the
// element's `tiling` property, the GIMP plug-in's grid modes), each view cut out of the engine's
// grid, its name, and the camera poses as the JSON the command line writes next to the views
// (--views-dir). One definition here, so the command line, the element and the plug-ins agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "z123/engine.hpp"
#include "z123/image/image.hpp"

namespace z123 {

// How the six views (engine order: index = kViewColumns·row + column of the model's grid) are laid
// out in one frame: COLUMNSxROWS, filled row by row in view order. The values are the element's
// property values and the plug-ins' output modes 1..4 minus 1: keep them.
enum class Tiling : int { k2x3 = 0, k3x2 = 1, k6x1 = 2, k1x6 = 3 };
inline constexpr int kTilingCount = 4;
struct TileLayout {
  int columns, rows;
};
TileLayout tiling_layout(Tiling tiling);
const char* tiling_name(Tiling tiling); // "2x3", "3x2", "6x1", "1x6"

// Copies view i of `grid` (the engine's kViewColumns x kViewRows grid of view_size squares, RGBA)
// to cell i of a layout.columns x layout.rows frame at `dst` (rows `stride` bytes apart, RGBA).
void write_tiled(const Image& grid, int view_size, TileLayout layout, std::uint8_t* dst, std::size_t stride);
// The same into a new tight RGBA image of layout.columns·view_size x layout.rows·view_size.
Image tiled(const Image& grid, Tiling tiling);

// View `index` of a generated grid (any size the engine makes), as its own image.
Image view_image(const Image& grid, int index);

// "View 1: azimuth 30°, elevation 20°" (1-based, as people count; UTF-8 degree sign).
std::string view_label(int index);

// The camera poses as JSON, byte for byte what `zero123pp --views-dir` writes to
// <name>_views.json: {"image": "<name>.png", "views": [{"index", "file": "<name>_view<i>.png",
// "row", "column", "azimuth_deg", "elevation_deg", "fov_deg"}, ...]}.
std::string views_json(const std::string& name);
// The file name of view i in that JSON: <name>_view<i>.png.
std::string view_file_name(const std::string& name, int index);

} // namespace z123
