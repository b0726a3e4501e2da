// z123_compare_images A B: exit 0 when two image files (PNG or JPEG) hold the same pixels, byte for
// byte, after both are widened to RGBA (gray and RGB get alpha 255): GIMP exports a layer with
// alpha as RGBA, while the command line may write the same pixels as RGB. Exit 1 with the first
// difference otherwise, 2 on a usage or file error. Used by the GIMP 3 test (test_gimp3.sh).
#include <z123/image/codec.hpp>
#include <z123/image/image.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

namespace {

std::vector<std::uint8_t> to_rgba(const z123::Image& image) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 4);
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) {
      std::uint8_t* o =
          out.data() +
          (static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width) + static_cast<std::size_t>(x)) * 4;
      if (image.channels <= 2) {
        o[0] = o[1] = o[2] = image.at(x, y, 0);
        o[3] = image.channels == 2 ? image.at(x, y, 1) : 255;
      } else {
        for (int c = 0; c < 3; ++c) o[c] = image.at(x, y, c);
        o[3] = image.channels == 4 ? image.at(x, y, 3) : 255;
      }
    }
  return out;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: z123_compare_images A B\n");
    return 2;
  }
  try {
    const z123::Image a = z123::load_image(argv[1]), b = z123::load_image(argv[2]);
    if (a.width != b.width || a.height != b.height) {
      std::printf("DIFFERENT SIZE: %s is %dx%d, %s is %dx%d\n", argv[1], a.width, a.height, argv[2], b.width, b.height);
      return 1;
    }
    const std::vector<std::uint8_t> pa = to_rgba(a), pb = to_rgba(b);
    std::size_t differing = 0, first = pa.size();
    for (std::size_t i = 0; i < pa.size(); ++i)
      if (pa[i] != pb[i]) {
        if (first == pa.size()) first = i;
        ++differing;
      }
    if (differing == 0) {
      std::printf("identical: %s = %s (%dx%d, RGBA, %zu bytes; stored with %d and %d channels)\n", argv[1], argv[2],
                  a.width, a.height, pa.size(), a.channels, b.channels);
      return 0;
    }
    const std::size_t pixel = first / 4;
    std::printf("DIFFERENT: %s vs %s: %zu of %zu bytes differ; first at x %zu y %zu channel %zu: %d vs %d\n", argv[1],
                argv[2], differing, pa.size(), pixel % static_cast<std::size_t>(a.width),
                pixel / static_cast<std::size_t>(a.width), first % 4, pa[first], pb[first]);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "z123_compare_images: %s\n", e.what());
    return 2;
  }
}
