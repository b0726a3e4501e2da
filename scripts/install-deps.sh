#!/usr/bin/env bash
# Installs every Debian/Ubuntu package the project needs to build, test and run, and makes sure
# the shader compiler can build the KHR cooperative-matrix kernels the engine prefers: where the
# system's glslc cannot (Debian 12), a newer one is fetched privately into .toolchain/
# (scripts/fetch-glslc-trixie.sh; the system's apt sources are never touched) and CMake uses it.
# Idempotent: packages already present are skipped, apt is only touched when something is missing.
# Usage: scripts/install-deps.sh            (run as root, or with sudo available)
set -euo pipefail

packages=(
  # toolchain
  g++ cmake ninja-build git pkg-config clang clang-format
  # libFuzzer and the sanitizer runtimes for scripts/run-fuzz.sh (clang only recommends them)
  libclang-rt-dev
  # cpack -G DEB: dpkg-shlibdeps finds the package's library dependencies
  dpkg-dev file
  # Vulkan: loader + headers, CPU driver (lavapipe), validation layers, tools, shader compiler
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools glslc spirv-tools
  # libraries
  nlohmann-json3-dev libgtest-dev libgmock-dev libpng-dev libjpeg-dev
  # GStreamer: the plugin's headers (and gstreamer-check for the tests), gst-launch-1.0 and the
  # elements the example pipelines use (videoconvert, videotestsrc: base; pngenc/pngdec,
  # videocrop, multifilesrc/sink: good)
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-tools
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  # The GIMP 2.10 plug-in: libgimp's headers (gimp-2.0, gimpui-2.0 for pkg-config), and GIMP itself
  # for its batch-mode tests (gimp-console-2.10 is in package gimp on Debian 12 and Ubuntu 24.04)
  libgimp2.0-dev gimp
  # scripts/download-weights.sh
  curl ca-certificates
  # test references (Pillow for preprocessing parity, numpy)
  python3 python3-numpy python3-pil
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The shader compiler: the system's where it compiles KHR cooperative-matrix GLSL (Ubuntu 24.04),
# else Debian 13's, fetched once into .toolchain/glslc-trixie/ (cmake/Shaders.cmake picks it up).
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
probe_out=$(mktemp -d)
trap 'rm -rf "$probe_out"' EXIT
if glslc --target-env=vulkan1.3 -o "$probe_out/khr.spv" "$repo/cmake/probes/KHR_COOPMAT.comp" 2>/dev/null; then
  echo "install-deps: the system's glslc compiles KHR cooperative-matrix shaders"
else
  echo "install-deps: the system's glslc ($(glslc --version 2>/dev/null | head -n1)) cannot compile KHR" \
       "cooperative-matrix shaders; fetching Debian 13's glslc into .toolchain/ (docs/newer-glslc.md)"
  if ! "$repo/scripts/fetch-glslc-trixie.sh"; then
    echo "install-deps: ERROR: could not fetch the newer glslc (above). Without it the build lacks the" >&2
    echo "  KHR cooperative-matrix kernels (about 20% slower on GPUs that have them). Configure with" >&2
    echo "  -DZ123_GLSLC=<a glslc that compiles cmake/probes/KHR_COOPMAT.comp>; see docs/newer-glslc.md." >&2
    exit 1
  fi
fi
