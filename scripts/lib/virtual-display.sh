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
