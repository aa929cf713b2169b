#!/bin/sh
# The man pages and completion scripts the build generates from the option tables
# (cli/cli_gendoc.c): mandoc -Tlint finds nothing in any page, every command has a page
# and every option --help shows is on it; bash completion (sourced into a real bash and
# driven the way bash drives it: COMP_WORDS, COMP_CWORD, the function `complete -p`
# names) offers the commands, every option of every command, the preset mixes, themes
# and models fabtop lists, enum values and files; zsh, interactive in tmux, completes the
# same (commands, options, enum values, presets, themes, models).
set -eu
FABTOP=${FABTOP_BIN:?}
BUILD=${FABTOP_BUILD:?}
: "${FABTOP_SRC:?}"
MAN=$BUILD/doc/man1
COMP=$BUILD/doc/completion
command -v mandoc >/dev/null || { echo "skip: no mandoc (Debian package mandoc)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- man pages ----
[ -f "$MAN/fabtop.1" ] || fail "no $MAN/fabtop.1: the build did not generate the pages"
# The file formats' pages, from docs/schema: every key of the mix's flows is on fabtop-mix(5).
for f in mix results; do
    [ -f "$BUILD/doc/man5/fabtop-$f.5" ] || fail "no fabtop-$f(5)"
done
mandoc -Tascii -O width=300 "$BUILD/doc/man5/fabtop-mix.5" | col -b > "$T/mix5.txt"
for k in $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); f=d["$defs"]["flow"]["properties"]; print(" ".join(f))' "$FABTOP_SRC/docs/schema/mix.schema.json"); do
    grep -q "flows\[\]\.$k (" "$T/mix5.txt" || fail "fabtop-mix(5) lacks flows[].$k"
done
grep -q "flows\[\]\.rate_gbps (.*Gb/s" "$T/mix5.txt" || fail "fabtop-mix(5): rate_gbps without its unit"
for p in "$MAN"/*.1 "$BUILD"/doc/man5/*.5; do
    out=$(mandoc -Tlint "$p" 2>&1 || true)
    [ -z "$out" ] || fail "mandoc -Tlint $p: $out"
done
# The explorer's options and every command's, each on its page (rendered, so the test reads
# what a reader sees, not the roff source).
opts_of() { # --help's options of a command, one per line
    "$FABTOP" "$@" --help | sed -n 's/^  \(-[A-Za-z], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p'
}
check_page() { # page-file command...
    page=$1
    shift
    mandoc -Tascii -O width=300 "$page" | col -b > "$T/page.txt"
    n=0
    for o in $(opts_of "$@"); do
        grep -q -e "$o" "$T/page.txt" || fail "$page lacks $o (fabtop $* --help has it)"
        n=$((n + 1))
    done
    [ "$n" -ge 2 ] || fail "fabtop $* --help listed only $n options"
}
check_page "$MAN/fabtop.1"
ncmd=0
for c in $("$FABTOP" __complete commands); do
    [ -f "$MAN/fabtop-$c.1" ] || fail "no page for fabtop $c"
    check_page "$MAN/fabtop-$c.1" "$c"
    grep -q "fabtop\\\\-$c" "$MAN/fabtop.1" || fail "fabtop(1) does not name fabtop-$c(1)"
    ncmd=$((ncmd + 1))
done
# Every command fabtop --help lists has completion's name for it too.
"$FABTOP" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' > "$T/help_cmds"
"$FABTOP" __complete commands > "$T/comp_cmds"
cmp -s "$T/help_cmds" "$T/comp_cmds" || fail "fabtop --help and __complete commands differ"
[ "$ncmd" -ge 10 ] || fail "only $ncmd commands"
# man(1) renders the page the way a reader gets it.
if command -v man >/dev/null; then
    MANWIDTH=100 man -l "$MAN/fabtop-run.1" 2>/dev/null | grep -q "measured seconds per size point" ||
        fail "man -l fabtop-run.1 lacks --duration's help"
fi

# ---- bash completion ----
[ -f "$COMP/fabtop" ] || fail "no bash completion script"
cat > "$T/drive.bash" <<'EOS'
# complete WORD...: what bash's programmable completion offers for the last word.
source "$COMP_SCRIPT"
fn=$(complete -p fabtop | sed -n 's/.*-F \([^ ]*\) fabtop$/\1/p')
[ -n "$fn" ] || { echo "no complete -F for fabtop" >&2; exit 2; }
COMP_WORDS=("$FABTOP" "$@")
COMP_CWORD=$#
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
"$fn" fabtop "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}" | sort -u
EOS
complete_() { COMP_SCRIPT="$COMP/fabtop" FABTOP="$FABTOP" bash "$T/drive.bash" "$@"; }
has() { # has WORD WORDS...: WORDS' completion offers WORD
    w=$1
    shift
    complete_ "$@" | grep -qx -e "$w" || fail "completing '$*' does not offer $w: $(complete_ "$@" | tr '\n' ' ')"
}
has run ru
has counters c
has --mix run --mi
has -m run -
# Only the command's own options: --dur offers --duration, nothing of another command's.
[ "$(complete_ run --mix quiet-vs-loaded --dur)" = "--duration" ] || fail "run --dur offers more than --duration"
has --duration run --mix quiet-vs-loaded --dur
# --mix offers exactly the presets `fabtop run --list` names.
"$FABTOP" run --list | awk '{print $1}' | sort -u > "$T/presets"
[ -s "$T/presets" ] || fail "run --list printed no presets"
complete_ run --mix "" | sort -u > "$T/offered"
for m in $(cat "$T/presets"); do grep -qx -e "$m" "$T/offered" || fail "--mix <Tab> lacks $m"; done
has quiet-vs-loaded run --mix qu
has incast drill --mix inc
has high-contrast --theme hi
has monochrome --theme ""
"$FABTOP" mix --list | awk 'NR>0 {print $1}' | grep -v '^$' | head -1 > "$T/model"
m=$(cat "$T/model")
[ -n "$m" ] && has "$m" mix --model "$(printf %s "$m" | cut -c1-3)"
# Files where the table says FILE; directories for DIR.
mkdir -p "$T/d/sub"
: > "$T/d/results.json"
has "$T/d/results.json" report --json "$T/d/res"
has "$T/d/results.json" run --mix quiet-vs-loaded --output "$T/d/re"
# Every option of every command is offered after a dash.
for c in "" $("$FABTOP" __complete commands); do
    # shellcheck disable=SC2086
    complete_ $c - > "$T/offered_opts"
    for o in $(opts_of $c); do
        grep -qx -e "$o" "$T/offered_opts" || fail "fabtop $c -<Tab> lacks $o"
    done
done
# An enum option offers its values, the table's names.
has verbs run --transport v
has nccl run --transport ""
has off run --neighbours o
[ "$(complete_ run --transport t)" = "tcp" ] || fail "run --transport t offers more than tcp"

# ---- zsh ----
# Parsed, then driven as a user drives it: an interactive zsh in tmux with _fabtop on its
# fpath and compinit, a line typed and Tab pressed, the line or the list read back. (zsh -n
# alone passed while no preset, theme or model name was ever offered: _arguments calls an
# action with its description options before the action's own words.)
zsh_line() { # TEXT: type TEXT, press Tab, print the screen once it settles
    tm send-keys -t z C-u
    tm send-keys -t z -l "$1"
    tm send-keys -t z Tab
    sleep 0.7
    tm capture-pane -p -t z
}
if command -v zsh >/dev/null; then
    zsh -n "$COMP/_fabtop" || fail "zsh cannot parse _fabtop"
    head -1 "$COMP/_fabtop" | grep -qx "#compdef fabtop" || fail "_fabtop lacks #compdef"
    if command -v tmux >/dev/null; then
        ZS=fabtop-zsh-$$
        tm() { tmux -L "$ZS" -f /dev/null "$@"; }
        trap 'tm kill-server 2>/dev/null || true; rm -rf "$T"' EXIT
        mkdir -p "$T/zhome" "$T/bin"
        ln -s "$FABTOP" "$T/bin/fabtop"
        tm new-session -d -s z -x 150 -y 40 \
            "env -i TERM=xterm-256color HOME=$T/zhome PATH=$T/bin:/usr/bin:/bin zsh -f"
        tm send-keys -t z "fpath=($COMP \$fpath); autoload -Uz compinit; compinit -u -D; cd $T/zhome" Enter
        sleep 0.5
        zsh_line "fabtop doc" | grep -q "fabtop doctor" || fail "zsh: 'doc' did not complete to doctor"
        zsh_line "fabtop run --neighb" | grep -q "fabtop run --neighbours" ||
            fail "zsh: --neighb did not complete to --neighbours"
        zsh_line "fabtop run --transport ver" | grep -q "fabtop run --transport verbs" ||
            fail "zsh: --transport ver did not complete to verbs"
        zsh_line "fabtop run --mix inc" | grep -q "fabtop run --mix incast" ||
            fail "zsh: --mix inc did not complete to the incast preset"
        out=$(zsh_line "fabtop --theme ")
        for th in $("$FABTOP" __complete themes); do
            echo "$out" | grep -q -- "$th" || fail "zsh: --theme offers no $th: $out"
        done
        zsh_line "fabtop mix --model Llama-3.1-4" | grep -q "Llama-3.1-405B" ||
            fail "zsh: --model Llama-3.1-4 did not complete to Llama-3.1-405B"
        tm kill-server 2>/dev/null || true
        echo "ok: zsh completes commands, options, enum values, presets, themes and models"
    fi
fi
echo "ok: $(ls "$MAN" | wc -l) pages lint-clean, $ncmd commands, completion offers presets, themes, models, files and every option"
