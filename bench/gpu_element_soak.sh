#!/usr/bin/env bash
# The element soak of issue 12 on the GPU machine: tests/gst/test_soak.cpp (appsrc ! zero123pp !
# appsink, new caps every 5 frames, different pixels every frame) run long on the GPU instead of
# lavapipe. The GPU machine has no GStreamer, so bench/stage_gst_bundle.sh packs this build's
# test_gst_soak and plugin with Debian 12's GStreamer, GLib and appsrc/appsink plugin into
# .gpu/gst.tar.xz (carry .gl and .gpu). Runs:
#   1. the bundled tiny model at the default 640x960 output, 2,000 frames, 4 steps each;
#   2. the full-size random v1.2 model, 50 frames at 28 steps (made with
#      zero123pp-bench-make-model from tests/data/v1.2-configs).
# RSS, descriptors and threads come from the test (every 100 / 5 frames); device memory from
# nvidia-smi every 5 s. Outputs in $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/z123-out}; mkdir -p "$OUT"
source .gl/vulkan-env.sh >/dev/null 2>&1
[ -d .gpu/gst ] || tar xJf .gpu/gst.tar.xz -C .gpu
G=$PWD/.gpu/gst
export LD_LIBRARY_PATH="$G/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" GST_PLUGIN_SYSTEM_PATH="$G/plugins" \
  GST_PLUGIN_PATH="$G/plugins" GST_REGISTRY=/tmp/z123-gst-registry.bin GST_REGISTRY_FORK=no \
  XDG_CACHE_HOME=/tmp/z123-cache Z123_TEST_DEVICE=NVIDIA Z123_TEST_DATA="$PWD/tests/data"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/element-soak-device.txt"
sample_memory() { # $1: file; device memory in use (MiB) every 5 s
  while sleep 5; do echo "$(date +%T) $(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits)"; done > "$1"
}
run_soak() { # $1: name, then environment assignments
  local name=$1; shift
  sample_memory "$OUT/element-soak-$name-device-mib.txt" & local sampler=$!
  echo "=== $name ($(date +%T))"
  env "$@" timeout 560 "$G/test_gst_soak" --gtest_filter='GstSoak.*' 2>&1 | tee "$OUT/element-soak-$name.txt"
  kill $sampler
}
case ${1:-tiny} in
  tiny)
    run_soak tiny-2000 Z123_SOAK_FRAMES=2000 Z123_SOAK_SAMPLE=100 Z123_SOAK_MODEL="$PWD/tests/data/golden/tiny-model" \
      Z123_SOAK_VIEW_SIZE=320 Z123_SOAK_STEPS=4 ;;
  v12)
    [ -f /tmp/v12/model_index.json ] || "$G/zero123pp-bench-make-model" /tmp/v12 tests/data/v1.2-configs > /dev/null
    run_soak v12-50 Z123_SOAK_FRAMES=50 Z123_SOAK_SAMPLE=5 Z123_SOAK_MODEL=/tmp/v12 Z123_SOAK_VIEW_SIZE=320 \
      Z123_SOAK_STEPS=28 ;;
esac
