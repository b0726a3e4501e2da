#!/usr/bin/env bash
# Downloads the Zero123++ v1.2 weights (sudo-ai/zero123plus-v1.2 on Hugging Face, diffusers
# layout, safetensors only: the files the engine reads, ~5.6 GB) with curl, then checks the folder
# with zero123pp-inspect when it is built. Interrupted downloads resume where they stopped; a
# file is only moved into place once complete, so a present file counts as done.
#   scripts/download-weights.sh [--revision REV] [--force] [DEST]
#     DEST        target folder (default: $Z123_MODEL_DIR, else models/zero123plus-v1.2)
#     --revision  branch, tag or commit of the repository (default: main)
#     --force     download every file again
# Environment: Z123_HF_ENDPOINT (default https://huggingface.co; any mirror with the same
#   <repo>/resolve/<rev>/<path> layout, or a file:// folder), HF_TOKEN (sent as a bearer token
#   when set), Z123_DOWNLOAD_RETRIES (curl retries per file, default 5), Z123_BUILD_DIR (where
#   tools/zero123pp-inspect is looked for, default build).
# Exit status: 0 done, 1 a download or the check failed, 2 usage.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

repo=sudo-ai/zero123plus-v1.2
# Every file the engine opens, plus the tokenizer folder it requires to exist (model_index.json
# lists it; the engine never tokenizes, but a folder missing a component is refused). Not
# fetched: .gitattributes, README and the example images.
files=(
  model_index.json
  scheduler/scheduler_config.json
  feature_extractor_clip/preprocessor_config.json
  feature_extractor_vae/preprocessor_config.json
  tokenizer/merges.txt
  tokenizer/special_tokens_map.json
  tokenizer/tokenizer_config.json
  tokenizer/vocab.json
  text_encoder/config.json
  vision_encoder/config.json
  vae/config.json
  unet/config.json
  text_encoder/model.safetensors
  vision_encoder/model.safetensors
  vae/diffusion_pytorch_model.safetensors
  unet/diffusion_pytorch_model.safetensors
)

usage() {
  sed -n '6,14p' "$0" | sed 's/^# \{0,1\}//' >&2
}

revision=main
force=0
dest=""
while [ $# -gt 0 ]; do
  case "$1" in
  -h | --help)
    usage
    exit 0
    ;;
  --revision)
    if [ $# -lt 2 ] || [ -z "$2" ]; then
      echo "error: --revision needs a value" >&2
      exit 2
    fi
    revision="$2"
    shift
    ;;
  --force) force=1 ;;
  -*)
    echo "error: unknown option $1" >&2
    usage
    exit 2
    ;;
  *)
    [ -z "$dest" ] || {
      echo "error: only one destination folder, got '$dest' and '$1'" >&2
      exit 2
    }
    dest="$1"
    ;;
  esac
  shift
done
dest="${dest:-${Z123_MODEL_DIR:-$root/models/zero123plus-v1.2}}"
endpoint="${Z123_HF_ENDPOINT:-https://huggingface.co}"
retries="${Z123_DOWNLOAD_RETRIES:-5}"
case "$retries" in '' | *[!0-9]*)
  echo "error: Z123_DOWNLOAD_RETRIES must be a number, not '$retries'" >&2
  exit 2
  ;;
esac
command -v curl >/dev/null || {
  echo "error: curl is not installed (apt-get install curl)" >&2
  exit 1
}

# Explains curl's exit status in terms of what the user can do about it.
curl_problem() {
  case "$1" in
  6) echo "cannot resolve the host name (no network or no DNS?)" ;;
  7) echo "cannot connect to the server (offline, or a firewall / proxy in the way?)" ;;
  22) echo "the server answered with an HTTP error (404: wrong revision or path; 401/403: access refused, set HF_TOKEN)" ;;
  23) echo "cannot write the file (disk full or no permission?)" ;;
  28) echo "timed out" ;;
  35 | 60) echo "TLS problem (proxy intercepting HTTPS or missing CA certificates?)" ;;
  37) echo "cannot read the file:// source" ;;
  *) echo "curl exit status $1" ;;
  esac
}

auth=()
[ -n "${HF_TOKEN:-}" ] && auth=(-H "Authorization: Bearer $HF_TOKEN")
progress=(--silent --show-error)
[ -t 2 ] && progress=(--progress-bar)

mkdir -p "$dest"
echo "Downloading $repo@$revision from $endpoint into $dest"
for f in "${files[@]}"; do
  target="$dest/$f"
  if [ "$force" = 0 ] && [ -f "$target" ]; then
    echo "  have   $f"
    continue
  fi
  mkdir -p "$(dirname "$target")"
  [ "$force" = 1 ] && rm -f "$target" "$target.part"
  url="$endpoint/$repo/resolve/$revision/$f"
  echo "  fetch  $f"
  # -C -: continue a .part file left by an interrupted run; --fail: HTTP errors are errors, not
  # saved as the file. Retries cover transient network errors and 5xx answers.
  status=0
  curl --fail --location "${progress[@]}" --continue-at - --retry "$retries" --retry-delay 3 \
    --connect-timeout 30 --speed-limit 1024 --speed-time 120 "${auth[@]}" --output "$target.part" "$url" ||
    status=$?
  if [ "$status" != 0 ]; then
    echo "error: downloading $url failed: $(curl_problem "$status")." >&2
    [ -f "$target.part" ] && echo "       Partial data kept in $target.part; run again to resume." >&2
    exit 1
  fi
  mv "$target.part" "$target"
done
echo "All ${#files[@]} files present in $dest"

inspect="${Z123_BUILD_DIR:-$root/build}/tools/zero123pp-inspect"
if [ -x "$inspect" ]; then
  echo "== $inspect $dest"
  "$inspect" "$dest"
else
  echo "(zero123pp-inspect not built at $inspect: build with scripts/build.sh, then run it on $dest to check every tensor)"
fi
