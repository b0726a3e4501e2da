#!/usr/bin/env bash
# Fetches Debian 13 ("trixie") glslc (shaderc 2025.x / glslang 15.x) into .toolchain/glslc-trixie/
# of this repository (git-ignored) and writes a wrapper, .toolchain/glslc-trixie/glslc, that runs
# it through trixie's own dynamic loader and libraries, so that it works on Debian 12.
#
# Why: Debian 12's glslc compiles GL_NV_cooperative_matrix but not GL_KHR_cooperative_matrix nor
# GL_NV_cooperative_matrix2. See docs/newer-glslc.md. Use it with
#   cmake -DZ123_GLSLC=$PWD/.toolchain/glslc-trixie/glslc ...
#
# The system's apt configuration and state are never touched: apt runs with a private
# configuration (APT_CONFIG, read before and instead of /etc/apt/apt.conf{,.d}), a private sources
# list (same Debian mirror host as the system, suite trixie, component main), private lists/cache
# directories and an empty dpkg status. Only `apt-get update` (into the private lists) and
# `apt-get download` are run; packages are unpacked with `dpkg -x`, never installed.
#
# Idempotent: if the wrapper exists and runs, nothing is downloaded again; the probe compiles
# below are always run.
#
# Usage: scripts/fetch-glslc-trixie.sh        (no root needed)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix="$repo/.toolchain/glslc-trixie"
state="$repo/.toolchain/apt-trixie"      # private apt state: config, lists, cache, debs
wrapper="$prefix/glslc"

# Runtime closure of /usr/bin/glslc on trixie (checked with the unpacked ld.so --list below).
packages=(glslc libshaderc1 spirv-tools libc6 libstdc++6 libgcc-s1 gcc-14-base)

log() { echo "fetch-glslc-trixie: $*"; }

# Debian mirror the system already uses: first URI ending in /debian (not debian-security).
find_mirror() {
  local uri
  uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
          2>/dev/null | grep -vE '^[[:space:]]*#' \
        | grep -oE '(https?|ftp)://[^ ]+/debian/?([[:space:]]|$)' | head -n1 | tr -d '[:space:]') || true
  echo "${uri:-http://deb.debian.org/debian}" | sed 's:/*$::'
}

wrapper_works() {
  [ -x "$wrapper" ] && "$wrapper" --version >/dev/null 2>&1
}

fetch_and_unpack() {
  local mirror keyring
  mirror=$(find_mirror)
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  log "mirror $mirror, suite trixie, component main"

  rm -rf "$state"
  mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$state/etc/apt.conf.d" \
           "$state/etc/preferences.d" "$state/etc/sources.list.d" "$state/debs"
  : > "$state/status"
  {
    echo "Types: deb"
    echo "URIs: $mirror"
    echo "Suites: trixie"
    echo "Components: main"
    if [ -r "$keyring" ]; then echo "Signed-By: $keyring"; fi
  } > "$state/etc/trixie.sources"

  # Private configuration: read by apt before anything else, and it redirects every config,
  # state and cache path into $state, so /etc/apt/apt.conf.d hooks (e.g. update Post-Invoke)
  # and the system's lists, pkgcache and dpkg status are never read or written.
  cat > "$state/apt.conf" <<EOF
Dir::Etc::Main "/dev/null";
Dir::Etc::Parts "$state/etc/apt.conf.d";
Dir::Etc::SourceList "/dev/null";
Dir::Etc::SourceParts "$state/etc/sources.list.d";
Dir::Etc::Preferences "/dev/null";
Dir::Etc::PreferencesParts "$state/etc/preferences.d";
Dir::State "$state";
Dir::State::Lists "$state/lists";
Dir::State::status "$state/status";
Dir::Cache "$state/cache";
Dir::Cache::archives "$state/cache/archives";
Dir::Log "$state";
APT::Architecture "amd64";
APT::Architectures { "amd64"; };
Acquire::Languages "none";
APT::Sandbox::User "$(id -un)";
EOF
  mv "$state/etc/trixie.sources" "$state/etc/sources.list.d/trixie.sources"

  export APT_CONFIG="$state/apt.conf"
  local o=(-o "Dir::State::Lists=$state/lists"
           -o "Dir::Etc::SourceList=/dev/null"
           -o "Dir::Etc::SourceParts=$state/etc/sources.list.d"
           -o "Dir::State::status=$state/status"
           -o "Dir::Cache=$state/cache")

  log "apt-get update (private lists in $state/lists)"
  apt-get "${o[@]}" update -qq
  log "apt-get download ${packages[*]}"
  (cd "$state/debs" && apt-get "${o[@]}" download "${packages[@]}")

  rm -rf "$prefix"
  mkdir -p "$prefix"
  local deb
  for deb in "$state/debs"/*.deb; do
    log "unpack $(basename "$deb")"
    dpkg -x "$deb" "$prefix"
  done

  # libc6 may ship the loader in lib64 as a symlink; make sure PREFIX/usr/lib64/ld-linux-x86-64.so.2
  # resolves inside the prefix (an absolute symlink would point at the host's older loader).
  local ld="$prefix/usr/lib64/ld-linux-x86-64.so.2"
  if [ -L "$ld" ] && [[ "$(readlink "$ld")" == /* ]]; then
    ln -sfn "../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" "$ld"
  fi
  if [ ! -e "$ld" ]; then
    mkdir -p "$prefix/usr/lib64"
    ln -sfn "../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" "$ld"
  fi

  cat > "$wrapper" <<'EOF'
#!/bin/sh
# glslc from Debian 13 (trixie), run through its own dynamic loader and libraries.
# Written by scripts/fetch-glslc-trixie.sh.
PREFIX=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
exec "$PREFIX/usr/lib64/ld-linux-x86-64.so.2" --library-path "$PREFIX/usr/lib/x86_64-linux-gnu" \
  "$PREFIX/usr/bin/glslc" "$@"
EOF
  chmod +x "$wrapper"

  # Every shared library glslc needs must come from the prefix.
  local list
  list=$("$ld" --library-path "$prefix/usr/lib/x86_64-linux-gnu" --list "$prefix/usr/bin/glslc")
  echo "$list"
  if echo "$list" | grep -q 'not found'; then
    log "ERROR: glslc needs libraries not in the package list above"
    exit 1
  fi
  if echo "$list" | grep '=>' | grep -v "$prefix" | grep -q .; then
    log "ERROR: some libraries resolve outside $prefix"
    exit 1
  fi

  # The private package lists (~140 MB) are only needed for the download; keep just the .debs.
  rm -rf "$state/lists" "$state/cache"
}

if wrapper_works; then
  log "$wrapper exists and runs; skipping download"
else
  fetch_and_unpack
  wrapper_works || { log "ERROR: $wrapper does not run"; exit 1; }
fi

log "version:"
"$wrapper" --version

probe_out=$(mktemp -d)
trap 'rm -rf "$probe_out"' EXIT
fail=0
for feature in KHR_COOPMAT NV_COOPMAT2; do
  src="$repo/cmake/probes/$feature.comp"
  if "$wrapper" --target-env=vulkan1.3 -o "$probe_out/$feature.spv" "$src"; then
    log "probe $feature: OK ($(wc -c < "$probe_out/$feature.spv") bytes of SPIR-V)"
  else
    log "probe $feature: FAILED"
    fail=1
  fi
done
[ "$fail" -eq 0 ] || exit 1
log "done; configure with: cmake -DZ123_GLSLC=$wrapper ..."
