#include "z123/image/preprocess.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "image/resample.hpp"
#include "z123/error.hpp"
#include "z123/parallel.hpp"

namespace z123 {
namespace {

std::string size_text(std::int64_t w, std::int64_t h) { return std::to_string(w) + "x" + std::to_string(h); }

// Python's `//` (floor division), which transformers' center_crop uses; it differs from C++'s
// truncation when the crop is larger than the image.
int floor_div2(int a) { return a >= 0 ? a / 2 : -((1 - a) / 2); }

// Pillow's DIV255: round-half-up of x / 255 for 0 <= x <= 255 * 255.
inline std::uint8_t div255(unsigned x) { return static_cast<std::uint8_t>(((x + 128) + ((x + 128) >> 8)) >> 8); }

void require_resizable(const Image& image, const char* what) {
  check_image(image, what);
  if (image.channels == 4) {
    throw invalid_argument(std::string(what) +
                           ": 4-channel input; composite it with to_rgb() first (Pillow resizes RGBA "
                           "premultiplied, which is not reproduced here)");
  }
}

void require_output_size(int width, int height, const char* what) {
  if (width <= 0 || height <= 0 || width > kMaxImageSide || height > kMaxImageSide) {
    throw invalid_argument(std::string(what) + ": output size " + size_text(width, height) + ", expected sides in 1.." +
                           std::to_string(kMaxImageSide));
  }
}

// Copies `src` into `dst` with src's (0, 0) at dst's (dx, dy); parts outside dst are dropped.
void blit(const Image& src, Image& dst, int dx, int dy) {
  const int c = src.channels;
  const int x_begin = std::max(0, -dx), x_end = std::min(src.width, dst.width - dx);
  const int y_begin = std::max(0, -dy), y_end = std::min(src.height, dst.height - dy);
  if (x_begin >= x_end) return;
  for (int y = y_begin; y < y_end; ++y) {
    const std::uint8_t* s = src.row(y) + static_cast<std::size_t>(x_begin) * c;
    std::copy(s, s + static_cast<std::size_t>(x_end - x_begin) * c,
              dst.row(y + dy) + static_cast<std::size_t>(x_begin + dx) * c);
  }
}

// The 256 x 3 possible outputs of rescale + normalize (every pixel maps through this table).
struct NormalizeTable {
  float v[256][3];
};

NormalizeTable normalize_table(const std::array<double, 3>& mean, const std::array<double, 3>& stdev,
                               double rescale_factor) {
  NormalizeTable t{};
  for (int c = 0; c < 3; ++c) {
    if (!(stdev[c] != 0.0) || !std::isfinite(stdev[c]) || !std::isfinite(mean[c])) {
      throw invalid_argument("normalize: channel " + std::to_string(c) + " has mean " + std::to_string(mean[c]) +
                             " and std " + std::to_string(stdev[c]) + ", expected finite values and std != 0");
    }
    // numpy: mean/std arrays take the image dtype (float32) before the arithmetic.
    const float m = static_cast<float>(mean[c]);
    const float s = static_cast<float>(stdev[c]);
    for (int u = 0; u < 256; ++u) {
      const float x = static_cast<float>(static_cast<double>(u) * rescale_factor); // uint8 * float -> float64
      t.v[u][c] = (x - m) / s;
    }
  }
  return t;
}

void require_rgb(const Image& rgb, const char* what) {
  check_image(rgb, what);
  if (rgb.channels != 3) {
    throw invalid_argument(std::string(what) + ": expected a 3-channel RGB image, found " +
                           std::to_string(rgb.channels) + " channels (use to_rgb first)");
  }
}

} // namespace

Resample resample_from_pil_code(int code) {
  switch (code) {
  case 1: return Resample::Lanczos;
  case 2: return Resample::Bilinear;
  case 3: return Resample::Bicubic;
  case 4: return Resample::Box;
  case 5: return Resample::Hamming;
  default: break;
  }
  throw unsupported("resample filter " + std::to_string(code) + " (" + resample_name(code) +
                    "): expected a Pillow filter code 1 (lanczos), 2 (bilinear), 3 (bicubic), 4 (box) or 5 (hamming)");
}

Image to_rgb(const Image& image) {
  check_image(image, "to_rgb");
  if (image.channels == 3) return image;
  Image out = Image::blank(image.width, image.height, 3);
  const std::size_t n = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height);
  const std::uint8_t* s = image.pixels.data();
  std::uint8_t* d = out.pixels.data();
  if (image.channels == 1) {
    for (std::size_t i = 0; i < n; ++i) d[3 * i] = d[3 * i + 1] = d[3 * i + 2] = s[i];
    return out;
  }
  // RGBA: Image.new("RGB", size, (127,)*3).paste(rgba, mask=alpha), Pillow's paste_mask_L blend on
  // straight (not premultiplied) colour.
  constexpr unsigned kBackground = 127;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned a = s[4 * i + 3];
    for (int c = 0; c < 3; ++c) d[3 * i + c] = div255(kBackground * (255 - a) + s[4 * i + c] * a);
  }
  return out;
}

ImageSize shortest_edge_size(int width, int height, int shortest) {
  if (width <= 0 || height <= 0 || shortest <= 0) {
    throw invalid_argument("shortest-edge resize: image " + size_text(width, height) + ", shortest edge " +
                           std::to_string(shortest) + ", expected positive values");
  }
  const int short_side = std::min(width, height), long_side = std::max(width, height);
  // int(S * long / short): Python's true division (correctly rounded double), then truncation.
  const double exact = static_cast<double>(static_cast<std::int64_t>(shortest) * long_side) / short_side;
  if (exact >= static_cast<double>(std::numeric_limits<int>::max())) {
    throw invalid_argument("shortest-edge resize of a " + size_text(width, height) + " image to " +
                           std::to_string(shortest) + ": the long side would be " + std::to_string(exact) +
                           " pixels, more than an int holds");
  }
  const int new_long = static_cast<int>(exact);
  return width <= height ? ImageSize{shortest, new_long} : ImageSize{new_long, shortest};
}

Image resize(const Image& image, int width, int height, Resample filter) {
  require_resizable(image, "resize");
  require_output_size(width, height, "resize");
  if (width == image.width && height == image.height) return image; // Pillow returns a copy
  return image_detail::resample_window(image, width, height, filter, 0, 0, width, height);
}

Image resize_shortest_edge(const Image& image, int shortest, Resample filter) {
  check_image(image, "resize_shortest_edge");
  const ImageSize s = shortest_edge_size(image.width, image.height, shortest);
  return resize(image, s.width, s.height, filter);
}

Image center_crop(const Image& image, int width, int height) {
  check_image(image, "center_crop");
  require_output_size(width, height, "center_crop");
  Image out = Image::blank(width, height, image.channels);
  // Source pixel of output (0, 0); negative when the crop is larger (zero padding around).
  blit(image, out, -floor_div2(image.width - width), -floor_div2(image.height - height));
  return out;
}

Image resize_shortest_edge_center_crop(const Image& image, int shortest, Resample filter, int crop_width,
                                       int crop_height) {
  require_resizable(image, "resize_shortest_edge_center_crop");
  require_output_size(crop_width, crop_height, "resize_shortest_edge_center_crop");
  const ImageSize s = shortest_edge_size(image.width, image.height, shortest);
  if (s.width == image.width && s.height == image.height) return center_crop(image, crop_width, crop_height);
  const int left = floor_div2(s.width - crop_width), top = floor_div2(s.height - crop_height);
  // The part of the crop that lies inside the resized image; the rest stays zero (padding).
  const int x0 = std::max(0, left), x1 = std::min(s.width, left + crop_width);
  const int y0 = std::max(0, top), y1 = std::min(s.height, top + crop_height);
  Image out = Image::blank(crop_width, crop_height, image.channels);
  const Image inside = image_detail::resample_window(image, s.width, s.height, filter, x0, y0, x1 - x0, y1 - y0);
  blit(inside, out, x0 - left, y0 - top);
  return out;
}

std::vector<float> normalize_hwc(const Image& rgb, const std::array<double, 3>& mean,
                                 const std::array<double, 3>& stdev, double rescale_factor) {
  require_rgb(rgb, "normalize_hwc");
  const NormalizeTable t = normalize_table(mean, stdev, rescale_factor);
  std::vector<float> out(rgb.pixels.size());
  // Pixels in ranges over the host's threads: a table lookup each, 0.8 M values for the 512 x 512
  // VAE input.
  parallel_ranges(out.size() / 3, 16384, [&](std::size_t first, std::size_t last) {
    for (std::size_t i = 3 * first; i < 3 * last; i += 3) {
      for (std::size_t c = 0; c < 3; ++c) out[i + c] = t.v[rgb.pixels[i + c]][c];
    }
  });
  return out;
}

std::vector<float> normalize_chw(const Image& rgb, const std::array<double, 3>& mean,
                                 const std::array<double, 3>& stdev, double rescale_factor) {
  require_rgb(rgb, "normalize_chw");
  const NormalizeTable t = normalize_table(mean, stdev, rescale_factor);
  const std::size_t plane = static_cast<std::size_t>(rgb.width) * static_cast<std::size_t>(rgb.height);
  std::vector<float> out(rgb.pixels.size());
  for (std::size_t p = 0; p < plane; ++p) {
    for (std::size_t c = 0; c < 3; ++c) out[c * plane + p] = t.v[rgb.pixels[3 * p + c]][c];
  }
  return out;
}

namespace {

// The CLIPImageProcessor steps on an RGB image (no copy of the input when nothing resizes it).
PreprocessedImage preprocess_rgb(const Image& rgb, const PreprocessorConfig& config) {
  Image resized;
  if (config.do_resize || config.do_center_crop) {
    const Resample filter = resample_from_pil_code(config.resample);
    if (config.do_resize && config.do_center_crop) {
      resized =
          resize_shortest_edge_center_crop(rgb, config.shortest_edge, filter, config.crop_width, config.crop_height);
    } else if (config.do_resize) {
      resized = resize_shortest_edge(rgb, config.shortest_edge, filter);
    } else {
      resized = center_crop(rgb, config.crop_width, config.crop_height);
    }
  }
  const Image& img = resized.pixels.empty() ? rgb : resized;
  // do_rescale = false / do_normalize = false are the identity parameters (exact in float32).
  const double rescale = config.do_rescale ? config.rescale_factor : 1.0;
  const std::array<double, 3> mean = config.do_normalize ? config.image_mean : std::array<double, 3>{0.0, 0.0, 0.0};
  const std::array<double, 3> stdev = config.do_normalize ? config.image_std : std::array<double, 3>{1.0, 1.0, 1.0};
  return {img.height, img.width, normalize_hwc(img, mean, stdev, rescale)};
}

} // namespace

PreprocessedImage preprocess_image(const Image& image, const PreprocessorConfig& config) {
  check_image(image, "preprocess");
  return image.channels == 3 ? preprocess_rgb(image, config) : preprocess_rgb(to_rgb(image), config);
}

PreprocessedInputs preprocess(const Image& image, const PreprocessorConfig& vae_config,
                              const PreprocessorConfig& clip_config) {
  check_image(image, "preprocess");
  Image converted;
  if (image.channels != 3) converted = to_rgb(image); // once for both branches
  const Image& rgb = image.channels == 3 ? image : converted;
  PreprocessedImage vae = preprocess_rgb(rgb, vae_config);
  PreprocessedImage clip = preprocess_rgb(rgb, clip_config);
  PreprocessedInputs out;
  out.vae_nhwc = std::move(vae.nhwc);
  out.vae_height = vae.height;
  out.vae_width = vae.width;
  out.clip_nhwc = std::move(clip.nhwc);
  out.clip_height = clip.height;
  out.clip_width = clip.width;
  return out;
}

} // namespace z123
