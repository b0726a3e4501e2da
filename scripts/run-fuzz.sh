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

mkdir -p "$build"
# The toolchain first: clang must link libFuzzer and the sanitizer runtimes, which Debian and
# Ubuntu ship in libclang-rt-dev (clang only recommends it).
probe="$build/fuzz-probe"
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
  'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' > "$probe.c"
if ! clang -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" > "$probe.log" 2>&1; then
  echo "run-fuzz: ERROR: clang cannot link a libFuzzer target with ASan/UBSan:" >&2
  sed 's/^/  /' "$probe.log" | tail -n 8 >&2
  echo "run-fuzz: install the runtimes with scripts/install-deps.sh (package libclang-rt-dev)" >&2
  exit 1
fi
# Configure quietly, but show the whole output if it fails.
if ! CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZ123_BUILD_FUZZ=ON -DZ123_BUILD_GST=OFF > "$build/configure.log" 2>&1; then
  cat "$build/configure.log" >&2
  echo "run-fuzz: ERROR: configuring the fuzz build failed (above; also in $build/configure.log)" >&2
  exit 1
fi
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
