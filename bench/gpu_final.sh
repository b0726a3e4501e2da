#!/usr/bin/env bash
# The measurement runs of bench/NOTES.md session 3 on the GPU machine. Carry .gl, .gpu (binaries:
# bench/gpu_open.sh's list plus zero123pp-bench-kernels and test_kernels), .ref (the official
# pipeline: ../shared/gpu/README.md) and .gl-val (Debian 13's Vulkan validation layer and
# libstdc++, for the kernel tests).
#   bench/gpu_final.sh speed   # official pipeline plain and torch.compile'd, then ours: one run;
#                              # our profile and kernel benchmark; open cold / warm (gpu_open.sh)
#   bench/gpu_final.sh check   # end-to-end parity (fp16, fp32), open cold/warm, kernel benchmark
#                              # against the engine profile, kernel tests with validation
# The profile the kernel benchmark checks against covers three images, after other GPU work: one
# image profiled first thing on a fresh machine once ran its UNet kernels 9-20% slower than later
# images did (bench/NOTES.md session 25, runs 1-3), and failed the check.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make_model
case "${1:-}" in
speed)
  stage "official pipeline, fp16, 28 steps"
  STEPS=28 REPS=3 timeout 150 python3 .ref/official_pipeline_example.py 2>/dev/null | tail -1 | tee "$OUT/official.json"
  stage "official pipeline, fp16, 28 steps, torch.compile"
  COMPILE=1 STEPS=28 REPS=3 timeout 330 python3 .ref/official_pipeline_example.py 2>/dev/null | tail -1 | tee "$OUT/official-compiled.json"
  stage "ours, fp16, 28 steps"
  timeout 120 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 4 2>&1 | tee "$OUT/ours.txt"
  stage "ours: profile and kernel benchmark"
  Z123_PROFILE=1 timeout 120 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 3 > "$OUT/profile.txt" 2>&1
  timeout 200 $B/zero123pp-bench-kernels --profile "$OUT/profile.txt" --markdown "$OUT/kernels.md" > "$OUT/kernels.txt" 2>&1
  echo "bench-kernels rc=$?"; grep -E "vae|profile check" "$OUT/kernels.txt"
  stage "ours: opening the model cold and warm, the CLI's wall time"
  bash bench/gpu_open.sh final > "$OUT/open.txt" 2>&1
  grep -E "^open|image|real|closed|wrote" "$OUT/open.txt"
  ;;
check)
  stage "official pipeline run with recorded noise (fp32, 28 steps, 640x960), random full-size folder"
  make_golden
  stage "ours: end-to-end parity, fp16 and fp32"
  timeout 120 $B/zero123pp-bench-e2e /tmp/v12py /tmp/e2e/pipeline_input.png --golden /tmp/e2e/pipeline.safetensors \
      --runs 1 2>&1 | tee "$OUT/parity-f16.txt"
  timeout 120 $B/zero123pp-bench-e2e /tmp/v12py /tmp/e2e/pipeline_input.png --golden /tmp/e2e/pipeline.safetensors \
      --runs 0 --precision f32 2>&1 | tee "$OUT/parity-f32.txt"
  stage "profile and kernel benchmark"
  Z123_PROFILE=1 timeout 120 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 3 > "$OUT/profile.txt" 2>&1
  timeout 200 $B/zero123pp-bench-kernels --profile "$OUT/profile.txt" --markdown "$OUT/kernels.md" > "$OUT/kernels.txt" 2>&1
  echo "bench-kernels rc=$?"; grep -v "dispatch:" "$OUT/kernels.txt" | tail -24
  stage "kernel tests on the GPU with the Vulkan 1.4.309 validation layer"
  Z123_TEST_DEVICE=NVIDIA with_validation timeout 230 $B/test_kernels > "$OUT/kernel-tests.txt" 2>&1
  echo "test_kernels rc=$?"; grep -E "^\[  (PASSED|FAILED) |tests ran|FAILED  \]" "$OUT/kernel-tests.txt" | head -30
  ;;
*) echo "usage: bench/gpu_final.sh speed|check"; exit 2 ;;
esac
