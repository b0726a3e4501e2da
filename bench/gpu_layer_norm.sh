#!/usr/bin/env bash
# The LayerNorm statistics written by the producing GEMMs (Z123_GEMM_LN=1, bench/NOTES.md session
# 35) against the normalize-only pass (0), on one binary. Carry .gl, .gl-val, .gpu (binaries of
# bench/stage_gpu_bins.sh; test_kernels, zero123pp-bench-e2e and zero123pp-bench-make-model are
# what this runs) and .ref (../shared/gpu/README.md; or .gpu/ref.tar.xz, a tar of it).
#   bench/gpu_layer_norm.sh   # ~4 minutes on an H100
#   Z123_LN_ROUNDS=0 bench/gpu_layer_norm.sh   # no timing rounds (bench/gpu_baselines.sh has them)
# Kernel tests of the GEMMs and norms under the validation layer; three rotated rounds of three
# images each way; the level profile each way (Z123_PROFILE_LEVELS=1); one image under the
# validation layer; end-to-end parity fp16 both ways and fp32 with Z123_GEMM_LN=1.
set -uo pipefail
cd "$(dirname "$0")/.."
[ -d .ref ] || tar xJf .gpu/ref.tar.xz
source bench/gpu_env.sh
echo "# bench/gpu_layer_norm.sh ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date +%F))"
stage model; make_model
stage "kernel tests with validation"
Z123_TEST_DEVICE=NVIDIA with_validation timeout 200 $B/test_kernels \
    --gtest_filter='*NormalizedInput*:*LayerNorm*:LinearArgs.*:*Linear.*' > "$OUT/kernel-tests.txt" 2>&1
echo "test_kernels rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|VUID" "$OUT/kernel-tests.txt" | head -20
for round in $(seq 1 "${Z123_LN_ROUNDS:-3}"); do
  order="1 0"; [ $round = 2 ] && order="0 1"
  for ln in $order; do
    stage "round $round, Z123_GEMM_LN=$ln"
    Z123_GEMM_LN=$ln timeout 100 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 3 2>&1 | grep -E "^image|rror"
  done
done
for ln in 1 0; do
  stage "level profile, Z123_GEMM_LN=$ln"
  Z123_GEMM_LN=$ln Z123_PROFILE_LEVELS=1 timeout 100 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 3 > "$OUT/levels-ln$ln.txt" 2>&1
  echo "rc=$?"
done
stage "one image under the validation layer, Z123_GEMM_LN=1"
Z123_VALIDATION=1 Z123_GEMM_LN=1 with_validation timeout 100 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 1 \
    > "$OUT/validation.txt" 2>&1
echo "rc=$? VUID lines: $(grep -c VUID "$OUT/validation.txt")"; grep -E "^image" "$OUT/validation.txt"
stage "official pipeline with recorded noise (golden)"
make_golden
for ln in 1 0; do
  stage "parity fp16, Z123_GEMM_LN=$ln"
  Z123_GEMM_LN=$ln timeout 120 $B/zero123pp-bench-e2e /tmp/v12py /tmp/e2e/pipeline_input.png \
      --golden /tmp/e2e/pipeline.safetensors --runs 1 2>&1 | grep -E "rel L2|levels" | tail -6
done
stage "parity fp32, Z123_GEMM_LN=1"
Z123_GEMM_LN=1 timeout 120 $B/zero123pp-bench-e2e /tmp/v12py /tmp/e2e/pipeline_input.png \
    --golden /tmp/e2e/pipeline.safetensors --runs 0 --precision f32 2>&1 | grep -E "rel L2|levels" | tail -6
stage end
