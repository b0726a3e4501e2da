#!/usr/bin/env bash
# Usage: test_deb.sh BUILD_DIR THIS_DIR GST(0|1) GIMP(0|1)
# Packages BUILD_DIR with cpack, unpacks the .deb into a scratch root and runs what it installed
# from there. Fails with a message naming the first thing missing or broken.
set -euo pipefail
build=$1 here=$2 gst=$3 gimp=${4:-0}
data=${Z123_TEST_DATA:-$here/../data}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "package_deb: FAIL: $*" >&2; exit 1; }

cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" > "$work/cpack.log" 2>&1 || {
  cat "$work/cpack.log" >&2
  fail "cpack -G DEB failed"
}
deb=$(ls "$work"/pkg/*.deb)
echo "package_deb: built $(basename "$deb") ($(du -h "$deb" | cut -f1))"
dpkg-deb --info "$deb" | sed -n 's/^ \(Package\|Version\|Depends\|Recommends\):/  \1:/p'
dpkg-deb --field "$deb" Depends | grep -q libvulkan1 || fail "Depends lacks libvulkan1 (dpkg-shlibdeps)"
dpkg-deb -x "$deb" "$work/root"
root=$work/root

for tool in zero123pp zero123pp-devices zero123pp-inspect zero123pp-sample-image; do
  [ -x "$root/usr/bin/$tool" ] || fail "/usr/bin/$tool is not in the package"
  "$root/usr/bin/$tool" --help > "$work/help.txt" || fail "$tool --help exited with $?"
  grep -q "^SYNOPSIS" "$work/help.txt" || fail "$tool --help has no SYNOPSIS"
  man=$root/usr/share/man/man1/$tool.1
  [ -f "$man" ] || fail "man page $tool.1 is not in the package"
  grep -q "^\.TH ${tool^^} 1" "$man" || fail "$tool.1 has no .TH line"
  grep -q '^\.SH SYNOPSIS' "$man" || fail "$tool.1 has no SYNOPSIS section"
done
echo "package_deb: tools and man pages OK"
"$root/usr/bin/zero123pp-sample-image" --size 64 "$work/cube.png" || fail "the installed zero123pp-sample-image failed"
"$root/usr/bin/zero123pp-inspect" "$data/golden/tiny-model" > /dev/null ||
  fail "the installed zero123pp-inspect rejected the tiny model"
[ -f "$root/usr/share/doc/zero123pp-vk/LICENSE" ] || fail "LICENSE is not in the package"

# The engine for other programs: headers, static library, pkg-config file (relocatable: its paths
# follow the unpacked tree).
pc=$(find "$root/usr/lib" -name zero123pp-vk.pc | head -n1)
[ -n "$pc" ] || fail "zero123pp-vk.pc is not in the package"
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs zero123pp-vk) ||
  fail "pkg-config cannot resolve zero123pp-vk"
# shellcheck disable=SC2086
g++ "$here/consumer.cpp" -o "$work/consumer" $flags || fail "a program using the installed engine does not build"
"$work/consumer" || fail "a program using the installed engine does not run"
echo "package_deb: engine library through pkg-config OK"

if [ "$gst" = 1 ]; then
  plugin=$(find "$root/usr/lib" -name libgstzero123pp.so | head -n1)
  [ -n "$plugin" ] || fail "libgstzero123pp.so is not in the package"
  case "$plugin" in */gstreamer-1.0/libgstzero123pp.so) ;; *) fail "plugin not in a gstreamer-1.0 folder: $plugin" ;; esac
  # Only the packaged plugin folder, and a registry of our own.
  GST_PLUGIN_SYSTEM_PATH_1_0=$(dirname "$plugin") GST_PLUGIN_PATH_1_0="" GST_REGISTRY_1_0=$work/registry.bin \
    gst-inspect-1.0 zero123pp > "$work/inspect.txt" 2>&1 || { cat "$work/inspect.txt" >&2; fail "gst-inspect-1.0 zero123pp failed"; }
  grep -E '^\s+License\s+MIT/X11' "$work/inspect.txt" || fail "the plugin's licence is not MIT/X11"
  grep -q "Filename.*$root" "$work/inspect.txt" || fail "gst-inspect did not load the packaged plugin"
  echo "package_deb: gst-inspect-1.0 zero123pp OK"
fi
if [ "$gimp" = 1 ]; then
  gimp_plugin=$root$(pkg-config --variable=gimplibdir gimp-2.0)/plug-ins/zero123pp/zero123pp
  [ -x "$gimp_plugin" ] || fail "the GIMP plug-in is not in the package at ${gimp_plugin#"$root"}"
  dpkg-deb --field "$deb" Depends | grep -q libgimp2.0 || fail "Depends lacks libgimp2.0 (dpkg-shlibdeps)"
  # GIMP registers the packaged plug-in: a user folder of our own holding only it.
  mkdir -p "$work/gimp2/plug-ins/zero123pp"
  ln -s "$gimp_plugin" "$work/gimp2/plug-ins/zero123pp/zero123pp"
  GIMP2_DIRECTORY=$work/gimp2 timeout 300 gimp-console-2.10 -i -d -f \
    -b '(gimp-message (if (= (car (gimp-procedural-db-proc-exists "plug-in-zero123pp")) 1) "zero123pp registered" "zero123pp missing"))' \
    -b '(gimp-quit 0)' < /dev/null > "$work/gimp.txt" 2>&1 || { cat "$work/gimp.txt" >&2; fail "gimp-console failed"; }
  grep -q "zero123pp registered" "$work/gimp.txt" || { cat "$work/gimp.txt" >&2; fail "GIMP did not register the packaged plug-in"; }
  echo "package_deb: GIMP registers the packaged plug-in-zero123pp OK"
fi
echo "package_deb: PASS"
