#!/usr/bin/env bash
# Packs the npm packages: the launcher `corral-mcp` and the platform package that carries
# BINARY (a `corral` built for this machine's platform, stripped here), into OUT_DIR, as
# tarballs that `npm install` takes by file (or `npm publish` takes as they are).
#
#     packaging/npm/pack.sh target/release/corral target/npm
set -euo pipefail
binary="$(realpath "$1")"
mkdir -p "$2"
out="$(realpath "$2")"
here="$(cd "$(dirname "$0")" && pwd)"
version="$(node -p "require('$here/corral-mcp/package.json').version")"

case "$(uname -m)" in
    x86_64) cpu=x64 ;;
    aarch64) cpu=arm64 ;;
    *) echo "pack.sh: no npm package for $(uname -m)" >&2; exit 2 ;;
esac
name="corral-mcp-linux-$cpu"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name/bin"
install -m 0755 "$binary" "$stage/$name/bin/corral"
# Stripped as the wheel's binary is (`strip = true` in packaging/python/pyproject.toml): its
# symbols and line tables are for debugging a build, not for every install (80 MB -> 17 MB
# for a release build).
command -v strip >/dev/null || { echo "pack.sh: strip (binutils) is needed to strip the binary" >&2; exit 2; }
strip --strip-all "$stage/$name/bin/corral"
cat > "$stage/$name/package.json" <<JSON
{
  "name": "$name",
  "version": "$version",
  "description": "The corral binary for Linux $cpu, for the corral-mcp package.",
  "license": "MIT OR Apache-2.0",
  "os": ["linux"],
  "cpu": ["$cpu"],
  "files": ["bin/corral"],
  "preferUnplugged": true
}
JSON
cp -r "$here/corral-mcp" "$stage/corral-mcp"
(cd "$stage" && npm pack --silent --pack-destination "$out" "./$name" "./corral-mcp" >/dev/null)
ls "$out/$name-$version.tgz" "$out/corral-mcp-$version.tgz"
