#!/usr/bin/env bash
# The test command: installs what is missing (apt), builds with warnings as errors, checks the
# code format, runs every test under CTest on the CPU Vulkan device (lavapipe) with validation
# layers on, fuzzes the file parsers briefly, then runs a subset of the suite again under
# AddressSanitizer and UndefinedBehaviorSanitizer (scripts/test-sanitizers.sh says which, and
# why not all). Each phase prints its time, so a slow CI run shows where the time went.
set -euo pipefail
cd "$(dirname "$0")/.."
phase_start=$SECONDS
phase_done() {
  echo "test.sh: $1 took $((SECONDS - phase_start)) s ($SECONDS s in all)"
  phase_start=$SECONDS
}
scripts/install-deps.sh
phase_done "installing dependencies"
export Z123_BUILD_DIR=${Z123_BUILD_DIR:-build-test}
scripts/build.sh -DZ123_WERROR=ON -DZ123_BUILD_TESTS=ON
scripts/check-format.sh
phase_done "the build and the format check"
# Tests use their own pipeline-cache folder and a CPU device even where a GPU exists.
export Z123_TEST_DEVICE=${Z123_TEST_DEVICE:-llvmpipe}
ctest --test-dir "$Z123_BUILD_DIR" --output-on-failure -j"$(nproc)" --timeout 900
phase_done "the test suite"
scripts/run-fuzz.sh
phase_done "fuzzing"
# The sanitizer run needs ~8 minutes of building and ~3 of testing on CI's 2-core machine. On a
# machine so slow that the steps above took most of CI's 90 minutes it is skipped, loudly, rather
# than letting the whole run time out. Z123_SANITIZE_BUDGET_S moves the threshold.
if [ "$SECONDS" -le "${Z123_SANITIZE_BUDGET_S:-2700}" ]; then
  scripts/test-sanitizers.sh
  phase_done "the sanitizer run"
else
  echo "test.sh: WARNING: SKIPPED the sanitizer run (scripts/test-sanitizers.sh): $SECONDS s have passed," \
    "over the ${Z123_SANITIZE_BUDGET_S:-2700} s that leave it room inside CI's 90 minutes"
fi
