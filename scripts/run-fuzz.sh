#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang + ASan/UBSan in a separate build dir and
# runs each for a short while, starting from the seed corpora in tests/fuzz/corpus/. Fails (non-zero
# exit) if a target crashes, leaks or trips a sanitizer; the crashing input is left in
# $BUILD_DIR/fuzz-artifacts/.
#
# Usage: scripts/run-fuzz.sh            (env: FUZZ_SECONDS=15, BUILD_DIR=<repo>/build-fuzz)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-15}

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZ123_BUILD_FUZZ=ON -DZ123_BUILD_GST=OFF >/dev/null
cmake --build "$build" --target fuzz_safetensors fuzz_configs

mkdir -p "$build/fuzz-artifacts"
for target in safetensors configs; do
  # New inputs go to a scratch corpus in the build dir; the checked-in seeds stay untouched.
  work="$build/fuzz-corpus/$target"
  mkdir -p "$work"
  echo "run-fuzz: fuzz_$target for ${seconds}s"
  "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-artifacts/$target-" "$work" "$root/tests/fuzz/corpus/$target"
done
echo "run-fuzz: no crashes"
