#!/usr/bin/env bash
# The kernel-route comparison of docs/devices.md on the GPU machine: zero123pp-bench-e2e --path
# for each route (default: the engine's choice, portable, each KHR fragment shape the device lists,
# NV v1), two warm images each after the first, one process per route, then a markdown table
# (route, warm s per image, ms per step, first image, peak) in $OUT/paths.md with the raw outputs
# beside it. Carry .gl and .gpu (bin.tar.xz from bench/stage_gpu_bins.sh).
#   bench/gpu_paths.sh [ROUTE...]
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu_env.sh
mkdir -p "$OUT/paths"
make_model
routes=("$@")
[ ${#routes[@]} -gt 0 ] || routes=(auto portable khr:16x16x16 khr:16x8x16 khr:16x8x8 nv)
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
{
  echo "Routes on ${gpu:-this GPU}, $(date -u +%F), random full-size v1.2, fp16, 28 steps, 640x960"
  echo
  echo "| route | warm s per image | ms per step | first image s | peak MiB |"
  echo "|---|---|---|---|---|"
} > "$OUT/paths.md"
for r in "${routes[@]}"; do
  f="$OUT/paths/e2e-${r//[:@]/_}.txt"
  timeout 200 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 3 --path "$r" > "$f" 2>&1
  echo "== $r (rc $?)"; grep -E "^image|rror" "$f" | cut -c1-160
  awk -v r="$r" '
    /^image [0-9]+:/ {
      s = $3; ms = ""; peak = "";
      for (i = 1; i <= NF; ++i) { if ($i == "ms/step,") ms = $(i - 1); if ($i == "memory") peak = $(i + 1) }
      if (/first image/) first = s; else { warm = warm (warm ? ", " : "") s; steps = steps (steps ? ", " : "") ms }
    }
    END { printf "| %s | %s | %s | %s | %s |\n", r, warm ? warm : "failed", steps, first, peak }' "$f" >> "$OUT/paths.md"
done
cat "$OUT/paths.md"
