#!/usr/bin/env bash
# The GPU soak of issue 12 on the GPU machine (which has no GStreamer: the element's soak runs in
# CI on lavapipe, tests/gst/test_soak.cpp): zero123pp-bench-soak with the bundled tiny model,
# 2,000 frames at the default 640x960 output (4 steps each, to keep it to minutes), then 50 frames
# of the full-size random v1.2 model at 28 steps. Carry .gl and .gpu (bin.tar.xz with
# zero123pp-bench-soak, zero123pp-bench-make-model and lib/). Outputs in $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "=== tiny model, 2000 frames ($(date +%T))"
timeout 400 $B/zero123pp-bench-soak tests/data/golden/tiny-model $IN --frames 2000 --steps 4 --every 100 \
  2>&1 | tee "$OUT/soak-tiny.txt"
make_model
echo "=== full-size random v1.2, 50 frames ($(date +%T))"
timeout 300 $B/zero123pp-bench-soak /tmp/v12 $IN --frames 50 --steps 28 --every 5 2>&1 | tee "$OUT/soak-v12.txt"
