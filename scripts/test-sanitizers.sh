#!/usr/bin/env bash
# The test suite again, built with AddressSanitizer + UndefinedBehaviorSanitizer (Z123_SANITIZE)
# in its own build folder, on lavapipe with validation on. scripts/test.sh runs it after the
# plain suite. A sanitizer report fails the test that triggered it (halt_on_error, and UBSan
# aborts instead of recovering).
#
# What it leaves out, and why:
#   - the tests that start programs which are not instrumented and load our instrumented plugin
#     (gst-launch-1.0 and gst-inspect-1.0 pipelines: Pipelines.*, GstInspect.*; the .deb check,
#     package_deb): the ASan runtime must be the first library of a process, so those processes
#     cannot load it; the in-process element tests (test_gst) cover the same element code;
#   - the two full end-to-end parity runs (PipelineParity.*): 28 steps of the tiny model take
#     ~5 minutes each under the sanitizers on 2 cores, and the same code paths run in
#     EngineApi.* and FaultInjection.*, which stay in.
# Leak reports from inside the Vulkan driver (lavapipe, LLVM), the Vulkan loader and GStreamer /
# GLib's own allocations are suppressed in tests/sanitizers/lsan.supp, each with its reason.
#
# State (2026-11-24, not yet in CI): the CPU-only suites (z123_io_tests 87/87, test_image 50/50)
# pass clean. Tests that open a Vulkan device pass their assertions but LeakSanitizer reports
# ~4 KiB in ~32 reallocs at exit from an "<unknown module>": the driver, which the Vulkan loader
# unloads (dlclose) at vkDestroyInstance, so its frames cannot be named and the library
# suppressions do not match. Next step: keep the driver mapped in test processes (dlopen with
# RTLD_NODELETE) so its frames resolve, then check that what remains is the driver's own.
#
# Usage: scripts/test-sanitizers.sh      (env: SAN_BUILD_DIR=build-asan)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SAN_BUILD_DIR:-build-asan}
Z123_BUILD_DIR=$build scripts/build.sh -DZ123_SANITIZE=ON -DZ123_WERROR=ON -DZ123_BUILD_TESTS=ON
export Z123_TEST_DEVICE=${Z123_TEST_DEVICE:-llvmpipe}
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" --timeout 1200 \
  -E '^(Pipelines\.|GstInspect\.|package_deb|Precisions/PipelineParity\.)'
