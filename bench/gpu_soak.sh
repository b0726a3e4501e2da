#!/usr/bin/env bash
# The GPU soak of issue 12 on the GPU machine (which has no GStreamer: the element's soak runs in
# CI on lavapipe, tests/gst/test_soak.cpp): zero123pp-bench-soak with the bundled tiny model,
# 2,000 frames at the default 640x960 output (4 steps each, to keep it to minutes), then 50 frames
# of the full-size random v1.2 model at 28 steps. Carry .gl and .gpu (bin.tar.xz with
# zero123pp-bench-soak, zero123pp-bench-make-model and lib/). Outputs in $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/z123-out}; mkdir -p "$OUT"
source .gl/vulkan-env.sh >/dev/null 2>&1
[ -d .gpu/bin ] || tar xJf .gpu/bin.tar.xz -C .gpu
B=.gpu/bin
export LD_LIBRARY_PATH="$PWD/$B/lib" XDG_CACHE_HOME=/tmp/z123-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
IN=tests/data/golden/pipeline_input.png
echo "=== tiny model, 2000 frames ($(date +%T))"
timeout 400 $B/zero123pp-bench-soak tests/data/golden/tiny-model $IN --frames 2000 --steps 4 --every 100 \
  2>&1 | tee "$OUT/soak-tiny.txt"
[ -f /tmp/v12/model_index.json ] || $B/zero123pp-bench-make-model /tmp/v12 tests/data/v1.2-configs > /dev/null
echo "=== full-size random v1.2, 50 frames ($(date +%T))"
timeout 300 $B/zero123pp-bench-soak /tmp/v12 $IN --frames 50 --steps 28 --every 5 2>&1 | tee "$OUT/soak-v12.txt"
