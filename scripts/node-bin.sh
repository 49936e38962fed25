#!/usr/bin/env bash
# Prints the bin directory of a Node.js of the given major version (22, 24, ...), for running the
# suite on each supported Node: the `node` on PATH when it is that major, else a copy taken from the
# npm registry's `node-<os>-<arch>` package (the official binary ships inside it), cached once per
# major under ${COMPACTION_NODE_CACHE:-~/.cache/compaction/node}/<major>. Nothing but npm is used.
set -euo pipefail
major="${1:?usage: scripts/node-bin.sh <major version, e.g. 22>}"
case "$major" in (*[!0-9]*|'') echo "node-bin: '$major' is not a major version number" >&2; exit 2;; esac

if command -v node >/dev/null 2>&1 && [ "$(node -p 'process.versions.node.split(".")[0]')" = "$major" ]; then
  dirname "$(command -v node)"
  exit 0
fi

cache="${COMPACTION_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/compaction/node}/$major"
if [ ! -x "$cache/bin/node" ]; then
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) echo "node-bin: no Node.js package on the npm registry for $(uname -s); install Node $major yourself" >&2; exit 1 ;;
  esac
  case "$(uname -m)" in
    x86_64|amd64) arch=x64 ;;
    aarch64|arm64) arch=arm64 ;;
    *) echo "node-bin: no Node.js package on the npm registry for $(uname -m); install Node $major yourself" >&2; exit 1 ;;
  esac
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "node-bin: fetching node-$os-$arch@$major from the npm registry into $cache" >&2
  (cd "$work" && npm pack "node-$os-$arch@$major" --silent >/dev/null)
  tar -xzf "$work"/node-"$os"-"$arch"-*.tgz -C "$work"
  mkdir -p "$(dirname "$cache")"
  rm -rf "$cache.partial" && mv "$work/package" "$cache.partial"
  rm -rf "$cache" && mv "$cache.partial" "$cache"
fi
echo "$cache/bin"
