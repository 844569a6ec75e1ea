#!/usr/bin/env bash
# Configures and builds ringsmb. usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# Compiles through ccache when it is installed (scripts/install-deps.sh
# installs it): paths are made relative to the source tree, so a second
# clone on the same machine (CI's) reuses what an earlier build compiled.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/build}
shift || true
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=$top CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$top" -B "$dir" -G Ninja "${launcher[@]}" "$@" >/dev/null
ninja -C "$dir"
