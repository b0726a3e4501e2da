#!/usr/bin/env bash
# Installs every Debian/Ubuntu package the project needs to build, test and run.
# Idempotent: packages already present are skipped, apt is only touched when something is missing.
# Usage: scripts/install-deps.sh            (run as root, or with sudo available)
set -euo pipefail

packages=(
  # toolchain
  g++ cmake ninja-build git pkg-config clang clang-format
  # Vulkan: loader + headers, CPU driver (lavapipe), validation layers, tools, shader compiler
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools glslc spirv-tools
  # libraries
  nlohmann-json3-dev libgtest-dev libgmock-dev libpng-dev libjpeg-dev
  # GStreamer: the plugin's headers (and gstreamer-check for the tests), gst-launch-1.0 and the
  # elements the example pipelines use (videoconvert, videotestsrc: base; pngenc/pngdec,
  # videocrop, multifilesrc/sink: good)
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-tools
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good
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
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
