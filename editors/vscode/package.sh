#!/usr/bin/env bash
# Builds the extension and packages it as a .vsix, offline once node_modules is installed:
# editors/vscode/package.sh [OUT.vsix]   (default: editors/vscode/crossfile-<version>.vsix)
# npm ci (from package-lock.json, skipped when node_modules is current), type check (strict),
# esbuild bundle, vsce package. Prints the .vsix path on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
command -v npm >/dev/null || { echo "package.sh: Node.js 20 and npm are required" >&2; exit 1; }
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
npx --no-install tsc --noEmit -p . >&2
npx --no-install esbuild src/extension.ts --bundle --outfile=dist/extension.js --external:vscode \
  --format=cjs --platform=node --target=node20 --minify --log-level=warning >&2
version=$(node -p 'require("./package.json").version')
out=${1:-$here/crossfile-$version.vsix}
case $out in /*) ;; *) out=$PWD/$out ;; esac
npx --no-install vsce package --skip-license --allow-missing-repository --no-dependencies -o "$out" >&2
echo "$out"
