# Sourced by the scripts that drive a real GIMP on a virtual X display (gimp-screenshots.sh,
# gimp-cancel-check.sh, gimp3-ui-check.sh; none of them runs in CI): the packages they need, their
# scratch folder and the background processes they start, all gone on exit.

# install_missing TAG PACKAGE...: installs with apt-get (as root, or through sudo) the packages
# that are not installed yet, saying which.
install_missing() {
  local tag=$1 p sudo=""
  shift
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "$tag: installing ${missing[*]}"
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# $work: a scratch folder; $pids: processes the caller starts (pids+=($!)). On exit the processes
# are killed and the folder removed.
work=$(mktemp -d)
pids=()
cleanup_virtual_display() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup_virtual_display EXIT

# start_xvfb BASE: a virtual X display :BASE..:BASE+8 (random, so that the scripts may run side by
# side), exported as DISPLAY, once it answers (up to 10 s); the server is in $pids.
start_xvfb() {
  local display=:$(($1 + RANDOM % 9))
  Xvfb "$display" -screen 0 1280x960x24 -nolisten tcp > "$work/xvfb.log" 2>&1 &
  pids+=($!)
  export DISPLAY=$display
  for _ in $(seq 50); do
    xdpyinfo > /dev/null 2>&1 && return 0
    sleep 0.2
  done
  return 0 # the first X client's own error says more than a timeout here
}

# wait_window NAME SECONDS: waits (up to SECONDS) for a visible window whose name matches the
# regular expression NAME and prints its id; returns 1 without one (the caller says why).
wait_window() {
  local id=""
  for _ in $(seq $(($2 * 2))); do
    id=$(xdotool search --onlyvisible --name "$1" 2> /dev/null | tail -n1) && [ -n "$id" ] && {
      echo "$id"
      return 0
    }
    sleep 0.5
  done
  return 1
}
