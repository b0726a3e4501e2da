#!/usr/bin/env bash
# Ours against both Python baselines in one run: the official pipeline in fp16, plain and with
# torch.compile (.ref/official_pipeline_example.py, 28 steps, three repetitions each), with ours
# run before, between and after them, so that each side meets the machine in the same state.
# Each "ours" stage runs every setting of Z123_OURS_SETTINGS (space-separated environment
# assignments, "-" for the defaults), three images each, rotating their order stage by stage.
# Carry .gl, .gpu (bench/stage_gpu_bins.sh) and .ref (or .gpu/ref.tar.xz, a tar of it).
#   Z123_OURS_SETTINGS="Z123_GEMM_LN=0 Z123_GEMM_LN=1" bench/gpu_baselines.sh   # ~5 min on an H100
set -uo pipefail
cd "$(dirname "$0")/.."
[ -d .ref ] || tar xJf .gpu/ref.tar.xz
source bench/gpu_env.sh
echo "# bench/gpu_baselines.sh ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date +%F))"
read -r -a settings <<< "${Z123_OURS_SETTINGS:--}"
ours_stage=0
ours() {
  ours_stage=$((ours_stage + 1))
  local n=${#settings[@]} i
  for ((i = 0; i < n; i++)); do
    local s=${settings[$(((i + ours_stage - 1) % n))]}
    stage "ours $ours_stage, ${s/#-/defaults}"
    if [ "$s" = - ]; then s=""; fi
    env $s timeout 100 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 3 2>&1 | grep -E "^image|rror"
  done
}
stage model; make_model
ours
stage "official pipeline, fp16, 28 steps"
STEPS=28 REPS=3 timeout 150 python3 .ref/official_pipeline_example.py 2>/dev/null | tail -1
ours
stage "official pipeline, fp16, 28 steps, torch.compile"
COMPILE=1 STEPS=28 REPS=3 timeout 330 python3 .ref/official_pipeline_example.py 2>/dev/null | tail -1
ours
stage end
