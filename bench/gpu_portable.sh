#!/usr/bin/env bash
# The portable path (Z123_FORCE_PORTABLE=1) on the GPU machine (issue 13 item 2): its kernel tests
# with the Vulkan validation layer (the attention's 128-invocation size runs only on devices with
# 48 KiB of shared memory, so not on lavapipe), the time per image with a profile, and the
# end-to-end parity against the official pipeline in fp16 and fp32. Carry .gl, .gl-val, .gpu
# (bench/stage_gpu_bins.sh) and .ref (../shared/gpu/README.md).
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export Z123_FORCE_PORTABLE=1
stage "portable kernel tests (attention, GEMM, conv), with the validation layer"
Z123_TEST_DEVICE=NVIDIA with_validation timeout 300 $B/test_kernels \
  --gtest_filter='Attention.*:*WideAttention*:*Gemm*:*Conv*' > "$OUT/portable-kernel-tests.txt" 2>&1
echo "test_kernels rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/portable-kernel-tests.txt" | head -12
make_model
stage "ours, portable, fp16, 28 steps"
timeout 150 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 2 > "$OUT/e2e-portable.txt" 2>&1
grep -E "^image|^engine" "$OUT/e2e-portable.txt"
# The tiled GEMM's alternatives in the same run: fp32 products (session 8's kernel), and 128 x 128
# tiles for every shape (the default takes 64 x 64 ones with packed products, session 10).
for alt in Z123_PORTABLE_ARITH=fp32 Z123_PORTABLE_GEMM=tiled; do
  stage "ours, portable, $alt"
  env "$alt" timeout 150 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 2 > "$OUT/e2e-portable-$(echo ${alt#Z123_} | tr = -).txt" 2>&1
  grep -E "^image" "$OUT/e2e-portable-$(echo ${alt#Z123_} | tr = -).txt"
done
stage "profile, portable"
Z123_PROFILE=1 timeout 120 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 1 > "$OUT/profile-portable.txt" 2>&1
grep -E "attention|GPU time" "$OUT/profile-portable.txt" | head -12
stage "official pipeline with recorded noise, then portable parity fp16 and fp32"
make_golden
for p in f16 f32; do
  timeout 150 $B/zero123pp-bench-e2e /tmp/v12py /tmp/e2e/pipeline_input.png --golden /tmp/e2e/pipeline.safetensors \
    --runs 0 --precision $p > "$OUT/parity-portable-$p.txt" 2>&1
  echo "parity portable $p: $(grep -E 'step 28|uint8|^parity:' "$OUT/parity-portable-$p.txt" | tr -s ' ' | tr '\n' ' ')"
done
