#!/usr/bin/env bash
# Builds the extension and packages it as a .vsix, offline once node_modules is installed:
#
#   editors/vscode/package.sh [--target linux-x64] [--server PATH] [OUT.vsix]
#
# Without --target: a VSIX for every platform that carries no server (it starts crossfile.serverPath
# or `crossfile` on PATH), default editors/vscode/crossfile-<version>.vsix.
# --target linux-x64: a platform VSIX that carries its server at extension/server/crossfile (the
# extension starts it when crossfile.serverPath is unset), default
# editors/vscode/crossfile-linux-x64-<version>.vsix. The server is built for any x86-64 CPU
# (cargo build --release --no-default-features --features portable into target/linux-x64, a cold
# build of minutes): llama.cpp's shared libraries go beside it, its CPU backend once per
# instruction set, the best one loaded at start (all of it in target/linux-x64/server). --server
# PATH packs that binary instead, with the llama.cpp libraries beside it if it has any (it must
# run where the VSIX is installed; scripts/test packs its own build this way).
#
# npm ci (npm-ci.sh: from package-lock.json, skipped when node_modules is current), type check (strict),
# esbuild bundle, vsce package. Prints the .vsix path on stdout; everything else goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
proj=$(cd "$here/../.." && pwd)
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

target= server= out=
while [ $# -gt 0 ]; do
  case $1 in
    --target) [ $# -ge 2 ] || usage; target=$2; shift 2 ;;
    --server) [ $# -ge 2 ] || usage; server=$2; shift 2 ;;
    -h | --help) usage ;;
    -*) echo "package.sh: unknown option '$1'" >&2; usage ;;
    *) [ -z "$out" ] || usage; out=$1; shift ;;
  esac
done
case $target in
  '' | linux-x64) ;;
  *) echo "package.sh: --target $target: only linux-x64 is built here" >&2; exit 2 ;;
esac
[ -z "$server" ] || [ -n "$target" ] || { echo "package.sh: --server needs --target (a VSIX that carries a server is for one platform)" >&2; exit 2; }
if [ -n "$server" ]; then
  [ -f "$server" ] && [ -x "$server" ] || { echo "package.sh: --server $server is not an executable file" >&2; exit 2; }
  server=$(cd "$(dirname "$server")" && pwd)/$(basename "$server")
fi

cd "$here"
"$here/npm-ci.sh"

# The server for a platform VSIX, built to run on any x86-64 CPU (see the header).
if [ -n "$target" ] && [ -z "$server" ]; then
  command -v cargo >/dev/null || { echo "package.sh: --target builds the server: cargo is required (or give --server PATH)" >&2; exit 1; }
  echo "package.sh: building the server for any x86-64 CPU (cargo build --release --features portable, target/linux-x64)" >&2
  # No target-cpu (the x86-64 baseline for crossfile's own code; llama.cpp's CPU backends pick
  # theirs at run time), and the binary finds llama.cpp's libraries in its own folder.
  (cd "$proj" && RUSTFLAGS='-C link-arg=-Wl,-rpath,$ORIGIN' CARGO_TARGET_DIR="$proj/target/linux-x64" \
    cargo build --release --quiet --no-default-features --features portable --bin crossfile) >&2
  # The server's folder as the VSIX carries it, also for --server: the binary, llama.cpp's
  # libraries, and the CPU backends the build script leaves in its output (GGML_BACKENDS_DIR).
  built=$proj/target/linux-x64/release
  backends=$(ls -td "$built"/build/llama-cpp-sys-2-*/out/backends 2>/dev/null | head -1)
  [ -n "$backends" ] && ls "$backends"/libggml-cpu-*.so >/dev/null 2>&1 \
    || { echo "package.sh: no llama.cpp CPU backends under $built/build" >&2; exit 1; }
  rm -rf "$proj/target/linux-x64/server" && mkdir -p "$proj/target/linux-x64/server"
  # The libraries under the names the binary asks for (their sonames: libllama.so.0, …).
  cp -L "$built/crossfile" "$backends"/../lib/lib*.so.[0-9] "$backends"/libggml-cpu-*.so "$proj/target/linux-x64/server/"
  server=$proj/target/linux-x64/server/crossfile
fi

npx --no-install tsc --noEmit -p . >&2
npx --no-install esbuild src/extension.ts --bundle --outfile=dist/extension.js --external:vscode \
  --format=cjs --platform=node --target=node20 --minify --log-level=warning >&2
version=$(node -p 'require("./package.json").version')
out=${out:-$here/crossfile${target:+-$target}-$version.vsix}
case $out in /*) ;; *) out=$PWD/$out ;; esac

# server/ exists only while a platform VSIX is packed (.vscodeignore lets server/** in).
rm -rf server
trap 'rm -rf "$here/server"' EXIT
if [ -n "$target" ]; then
  mkdir server
  install -m 755 "$server" server/crossfile
  # llama.cpp's shared libraries beside the binary (a portable build; a native one has none).
  for lib in "$(dirname "$server")"/libllama.so* "$(dirname "$server")"/libggml*.so*; do
    if [ -f "$lib" ]; then cp -L "$lib" server/ && chmod 644 "server/$(basename "$lib")"; fi
  done
  npx --no-install vsce package --skip-license --allow-missing-repository --no-dependencies --target "$target" -o "$out" >&2
else
  npx --no-install vsce package --skip-license --allow-missing-repository --no-dependencies -o "$out" >&2
fi
echo "$out"
