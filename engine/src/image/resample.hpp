// Pillow's resampler (libImaging/Resample.c, 8 bits per channel), restricted to a window of the
// output. Private to the image module; the public entry points are in z123/image/preprocess.hpp.
#pragma once

#include "z123/image/image.hpp"
#include "z123/image/preprocess.hpp"

namespace z123::image_detail {

// The pixels [x0, x0 + width) x [y0, y0 + height) of Pillow's
// `image.resize((out_width, out_height), filter)`; the window must lie inside the output.
// `image` has 1 or 3 channels (4 works too, but Pillow resizes RGBA premultiplied, which
// callers exclude).
Image resample_window(const Image& image, int out_width, int out_height, Resample filter, int x0, int y0, int width,
                      int height);

} // namespace z123::image_detail
