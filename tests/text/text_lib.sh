# text_lib: what the text-output tests share: FABTOP, a scratch directory $T removed on exit,
# fail(), and fabtop() running the binary with HOME and the XDG directories inside $T.
set -eu
FABTOP=${FABTOP_BIN:?FABTOP_BIN names the fabtop binary}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
fabtop() { HOME=$T XDG_CONFIG_HOME=$T/cfg XDG_DATA_HOME=$T/data "$FABTOP" "$@"; }
