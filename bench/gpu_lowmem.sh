#!/usr/bin/env bash
# Low-memory mode against the normal layout on the GPU machine (issue 13, item 4): peak device
# memory, time per image and the memory breakdown of each, whether the two images are the same
# bytes, and the end-to-end parity of the low-memory mode against the official pipeline (fp16
# and fp32). Carry .gl, .gpu (bench/stage_gpu_bins.sh) and .ref (../shared/gpu/README.md).
#   bench/gpu_lowmem.sh            # both layouts, then parity in the low-memory one
#   bench/gpu_lowmem.sh layouts    # both layouts only
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make_model
for mode in normal low; do
  stage "ours, fp16, 28 steps, $mode memory layout"
  timeout 150 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 3 --memory $mode 2>&1 | tee "$OUT/e2e-$mode.txt" | grep -vE "^  |^open"
  grep -A7 "^memory" "$OUT/e2e-$mode.txt"
  cp /tmp/zero123pp-bench-e2e.png "$OUT/image-$mode.png"
done
cmp "$OUT/image-normal.png" "$OUT/image-low.png" && echo "images: identical bytes"
[ "${1:-}" = layouts ] && exit 0
stage "random full-size v1.2 folder (PyTorch modules) and the official pipeline with recorded noise"
make_golden
stage "ours, low memory layout: end-to-end parity, fp16 and fp32"
timeout 120 $B/zero123pp-bench-e2e /tmp/v12py /tmp/e2e/pipeline_input.png --golden /tmp/e2e/pipeline.safetensors \
    --runs 1 --memory low 2>&1 | tee "$OUT/parity-low-f16.txt" | grep -vE "^  |^open"
timeout 120 $B/zero123pp-bench-e2e /tmp/v12py /tmp/e2e/pipeline_input.png --golden /tmp/e2e/pipeline.safetensors \
    --runs 0 --precision f32 --memory low 2>&1 | tee "$OUT/parity-low-f32.txt" | grep -vE "^  |^open"
