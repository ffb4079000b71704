#!/usr/bin/env bash
# The extension's node_modules as package-lock.json pins them (npm ci), skipped when they are
# current. package.sh and test/run --unit start with it, so a fresh clone needs no step of its own.
set -euo pipefail
cd "$(dirname "$0")"
command -v npm >/dev/null || { echo "npm-ci.sh: Node.js 20 and npm are required" >&2; exit 1; }
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
