// CPU preprocessing of the condition image, bit-exact with the reference pipeline (spec §4):
// `to_rgb_image` (RGBA composited on gray 127 with Pillow's integer blend), then per feature
// extractor the transformers-4.3x CLIPImageProcessor steps: Pillow resize of the shortest edge,
// center crop, rescale (x/255 in float64, stored float32), normalize ((x - mean) / std in float32).
//
// The uint8 stages match Pillow 9.x exactly (tests/image compares against Pillow itself): Pillow's
// antialiased separable resampling with 22-bit fixed-point coefficients and a uint8 intermediate
// between its horizontal and vertical passes. Any float or GPU "equivalent" (PyTorch/OpenCV
// bilinear, bicubic a = -0.75, no antialiasing) shifts the conditioning visibly (§17.25).
#pragma once

#include <array>
#include <vector>

#include "z123/image/image.hpp"
#include "z123/model/configs.hpp"

namespace z123 {

// Pillow's filter codes (PIL.Image.Resampling). NEAREST (0) takes a different code path in Pillow
// and is not implemented.
enum class Resample : int { Lanczos = 1, Bilinear = 2, Bicubic = 3, Box = 4, Hamming = 5 };

// Throws `unsupported` for a code that is not one of the enumerators above.
Resample resample_from_pil_code(int code);

// The pipeline's to_rgb_image: RGB is returned unchanged; RGBA is composited onto gray 127 with
// Pillow's paste-with-mask rounding, out = DIV255(127*(255-a) + c*a). Extension: 1-channel gray
// is replicated to RGB (the official pipeline raises for mode L; callers usually convert first).
// Anything else (e.g. 2-channel gray+alpha) throws invalid_argument.
Image to_rgb(const Image& image);

struct ImageSize {
  int width = 0;
  int height = 0;
  bool operator==(const ImageSize&) const = default;
};

// transformers' get_resize_output_image_size(default_to_square=False): the short side becomes
// `shortest`, the long side int(shortest * long / short) (truncated). Throws invalid_argument
// for non-positive inputs or a result that does not fit in an int.
ImageSize shortest_edge_size(int width, int height, int shortest);

// PIL.Image.resize((width, height), filter) on a 1- or 3-channel image (RGBA must go through
// to_rgb first: Pillow resizes it premultiplied, which this does not reproduce). Same size is
// an exact copy, as in Pillow. Output sides are limited to kMaxImageSide.
Image resize(const Image& image, int width, int height, Resample filter);

// resize() to shortest_edge_size(image, shortest).
Image resize_shortest_edge(const Image& image, int shortest, Resample filter);

// transformers' center_crop: top = (H - height) // 2, left = (W - width) // 2 (floor division).
// Where the crop reaches outside the image (crop larger than the image) the output is zero,
// exactly like transformers' zero padding.
Image center_crop(const Image& image, int width, int height);

// center_crop(resize_shortest_edge(image, shortest, filter), crop_width, crop_height), computed
// without materialising the discarded part of the resized image (identical bytes: every output
// pixel of Pillow's resampler depends only on its own coefficients). This matters for very
// elongated inputs, whose resized long side can be huge.
Image resize_shortest_edge_center_crop(const Image& image, int shortest, Resample filter, int crop_width,
                                       int crop_height);

// transformers' rescale + normalize on a 3-channel image: per value
//   x = float32(float64(u8) * rescale_factor);  out = (x - float32(mean[c])) / float32(std[c])
// with the subtraction and division in float32, as numpy does. Pass rescale_factor 1 and
// mean 0 / std 1 to reproduce do_rescale / do_normalize = false exactly.
inline constexpr double kRescale1Over255 = 0.00392156862745098; // the configs' rescale_factor
std::vector<float> normalize_hwc(const Image& rgb, const std::array<double, 3>& mean,
                                 const std::array<double, 3>& stdev, double rescale_factor = kRescale1Over255);
std::vector<float> normalize_chw(const Image& rgb, const std::array<double, 3>& mean,
                                 const std::array<double, 3>& stdev, double rescale_factor = kRescale1Over255);

// One feature extractor's output for the engine: float32 [height, width, 3] (NHWC with N = 1).
struct PreprocessedImage {
  int height = 0;
  int width = 0;
  std::vector<float> nhwc;
};

// to_rgb, then the CLIPImageProcessor steps enabled in `config` (do_resize, do_center_crop,
// do_rescale, do_normalize). do_convert_rgb has nothing left to do after to_rgb.
PreprocessedImage preprocess_image(const Image& image, const PreprocessorConfig& config);

struct PreprocessedInputs {
  std::vector<float> vae_nhwc;  // [vae_height, vae_width, 3]: 512x512 for v1.2, range [-0.625, 0.625]
  std::vector<float> clip_nhwc; // [clip_height, clip_width, 3]: 224x224 for v1.2
  int vae_height = 0, vae_width = 0;
  int clip_height = 0, clip_width = 0;
};

// Both branches of the pipeline (spec §3): feature_extractor_vae and feature_extractor_clip.
PreprocessedInputs preprocess(const Image& image, const PreprocessorConfig& vae_config,
                              const PreprocessorConfig& clip_config);

} // namespace z123
