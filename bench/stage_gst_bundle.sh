#!/usr/bin/env bash
# Packs what bench/gpu_element_soak.sh needs on the GPU machine (which has no GStreamer) into
# .gpu/gst.tar.xz: this build's test_gst_soak, plugin and zero123pp-bench-make-model (stripped), and
# the Debian 12 libraries they load (GStreamer, GLib and their dependencies, libpng, libjpeg)
# with GStreamer's appsrc/appsink plugin, all taken from this machine's installed packages.
# Usage: bench/stage_gst_bundle.sh [BUILD_DIR]   (default build-test; a -DZ123_BUILD_TESTS=ON build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-test}
stage=.gpu/gst
rm -rf "$stage" && mkdir -p "$stage/lib" "$stage/plugins"
strip -o "$stage/test_gst_soak" "$build/tests/gst/test_gst_soak"
strip -o "$stage/plugins/libgstzero123pp.so" "$build/gst-plugin/libgstzero123pp.so"
strip -o "$stage/zero123pp-bench-make-model" "$build/bench/zero123pp-bench-make-model"
cp /usr/lib/x86_64-linux-gnu/gstreamer-1.0/libgstapp.so "$stage/plugins/"
# Every library the three programs and the plugins load, except glibc's, the C++ runtime (the
# GPU machine's own is newer, and its Vulkan driver shares it) and the Vulkan loader (.gl).
for f in "$stage"/test_gst_soak "$stage"/plugins/*.so "$stage"/zero123pp-bench-make-model; do ldd "$f"; done |
  awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libvulkan|libstdc\+\+|libgcc_s)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
tar cJf .gpu/gst.tar.xz -C .gpu gst
ls -la .gpu/gst.tar.xz
