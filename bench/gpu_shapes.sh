#!/usr/bin/env bash
# Every KHR fragment shape the GPU lists, forced in turn (Z123_COOPMAT_SHAPE; issue 13 item 1):
# the attention kernel tests with the Vulkan validation layer, the end-to-end parity against the
# official pipeline (fp16), and the time per image of each shape beside the default. Carry .gl,
# .gl-val, .gpu (bench/stage_gpu_bins.sh) and .ref (../shared/gpu/README.md).
#   bench/gpu_shapes.sh [SHAPE ...]   # default: 16x16x16 16x8x16 16x8x8
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SHAPES=${*:-16x16x16 16x8x16 16x8x8}
for s in $SHAPES; do
  stage "attention kernel tests, $s, with the validation layer"
  Z123_COOPMAT_SHAPE=$s Z123_TEST_DEVICE=NVIDIA with_validation \
    timeout 200 $B/test_kernels --gtest_filter='Attention*' > "$OUT/attention-tests-$s.txt" 2>&1
  echo "test_kernels rc=$?"; grep -E "^\[  (PASSED|FAILED) |tests ran|FAILED  \]|SKIPPED \]" "$OUT/attention-tests-$s.txt" | head -12
done
make_model
for s in $SHAPES; do
  stage "ours, fp16, 28 steps, $s"
  Z123_COOPMAT_SHAPE=$s timeout 120 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 3 > "$OUT/e2e-$s.txt" 2>&1
  grep -E "^image|^engine" "$OUT/e2e-$s.txt"
done
stage "official pipeline with recorded noise, then parity per shape"
make_golden
for s in $SHAPES; do
  Z123_COOPMAT_SHAPE=$s timeout 120 $B/zero123pp-bench-e2e /tmp/v12py /tmp/e2e/pipeline_input.png \
    --golden /tmp/e2e/pipeline.safetensors --runs 0 > "$OUT/parity-$s.txt" 2>&1
  echo "parity $s: $(grep -E 'step 28|uint8|^parity:' "$OUT/parity-$s.txt" | tr -s ' ' | tr '\n' ' ')"
done
