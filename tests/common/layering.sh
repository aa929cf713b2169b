#!/bin/sh
# layering: the include rules that keep the floor plan (docs/architecture.md), on the
# #include "..." lines of the sources (system headers <...> are not checked here):
#   1. curses: the libraries (common/, topology/, engine/), text/ and report/ never include it, and
#      only the front end links it;
#   2. engine layers: each engine/ subsystem includes only itself and the layers below it;
#   3. views: tui/ and text/ include only the engine's public headers;
#   4. front end: text/ below tui/ below cli/ (includes and links), and cli/ cites files that
#      exist.
# The link side of rule 2 is in the build: engine/CMakeLists.txt links each library whole
# (layer_check_*), so a call into a library above fails the build; tests/common/engine_links.sh
# checks the links each engine library declares.
set -u
src=${FABTOP_SRC:?}
fail=0

bad() {
    echo "FAIL: $*"
    fail=1
}

# The quoted includes of file $1, one per line.
includes() {
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"
}

# check_files WHAT ALLOWED FILE...: every quoted include of each FILE starts with one of the
# space-separated prefixes in ALLOWED (a prefix ending in .h is one header). With $only set,
# only the includes that start with it are judged.
only=
check_files() {
    what=$1
    allowed=$2
    shift 2
    for f in "$@"; do
        [ -f "$f" ] || continue
        for inc in $(includes "$f"); do
            case $inc in
            "$only"*) ;;
            *) continue ;;
            esac
            ok=0
            for p in $allowed; do
                case $inc in
                "$p"*) ok=1 ;;
                esac
            done
            [ $ok = 1 ] || bad "$what: ${f#"$src"/} includes \"$inc\""
        done
    done
}

# ---- 1. curses stays in the front end ----

curses_re='#[[:space:]]*include[[:space:]]*[<"](n?curses|ncursesw/|term\.h|panel\.h)'
hits=$(grep -rlE "$curses_re" "$src/common" "$src/topology" "$src/engine" "$src/text" \
    "$src/report" 2>/dev/null)
[ -z "$hits" ] || bad "curses included outside tui/: $hits"
# cli/: only the explorer's command, which owns the terminal (initscr ... endwin).
hits=$(grep -rlE "$curses_re" "$src/cli" 2>/dev/null | grep -v '/cli_explore\.c$')
[ -z "$hits" ] || bad "curses included in cli/ outside cli_explore.c: $hits"
hits=$(find "$src/common" "$src/topology" "$src/engine" -name CMakeLists.txt \
    -exec grep -lE 'NCURSES|Curses' {} +)
[ -z "$hits" ] || bad "a library links curses: $hits"
# MPI only in sweep/ (fabtop-sweep): fabtop and every library start on nodes without libmpi.
hits=$(grep -rlE '#[[:space:]]*include[[:space:]]*[<"]mpi\.h' "$src/common" "$src/topology" \
    "$src/engine" "$src/text" "$src/tui" "$src/cli" 2>/dev/null)
hits="$hits$(find "$src/common" "$src/topology" "$src/engine" "$src/text" "$src/tui" "$src/cli" \
    -name CMakeLists.txt -exec grep -lE '(^|[^A-Z])OMPI|MPI_C|ompi-c' {} +)"
[ -z "$hits" ] || bad "MPI outside sweep/: $hits"

# ---- 2. engine layers ----
# Bottom up; each layer may include itself and every layer above it in this list (the ones
# below it in the stack). The transports sit side by side: each includes its own folder and the
# contract engine/xport/xport.h, never another transport; the registry (engine/xport/*.c) may
# include them all. Keep in step with engine/CMakeLists.txt.
#   common/ topology/ | sim, sweep, model, path (side by side, common/ only), launch | flow | counters | peer | xport/{tcp,verbs,nccl,sim} | xport
#   | results | run, judge (side by side) | rack
base="common/ topology/"
sim="common/ engine/sim/"
flow="$base engine/sim/ engine/flow/"
counters="$flow engine/counters/"
peer="common/ engine/peer/"
transport="$counters engine/peer/ engine/xport/xport.h"
e=$src/engine
check_files "engine/sim (common/ only)" "$sim" "$e"/sim/*.[ch]
check_files "engine/sweep (common/ only)" "common/ engine/sweep/" "$e"/sweep/*.[ch]
check_files "engine/model (common/ only)" "common/ engine/model/" "$e"/model/*.[ch]
check_files "engine/path (common/ only)" "common/ engine/path/" "$e"/path/*.[ch]
check_files "engine/launch (common/, topology/)" "$base engine/launch/" "$e"/launch/*.[ch]
check_files "engine/flow" "$flow" "$e"/flow/*.[ch]
check_files "engine/counters" "$counters" "$e"/counters/*.[ch]
check_files "engine/peer" "$peer" "$e"/peer/*.[ch]
for t in tcp verbs nccl sim; do
    check_files "engine/xport/$t" "$transport engine/xport/$t/" "$e"/xport/$t/*.[ch]
done
check_files "engine/doctor" "$base engine/peer/ engine/doctor/" "$e"/doctor/*.[ch]
check_files "engine/xport (registry)" "$transport engine/xport/" "$e"/xport/*.[ch]
check_files "engine/results" "$counters engine/peer/ engine/xport/ engine/results/ engine/path/" \
    "$e"/results/*.[ch]
check_files "engine/run" "$counters engine/peer/ engine/doctor/ engine/xport/ engine/results/ engine/model/ engine/path/ engine/run/" \
    "$e"/run/*.[ch]
check_files "engine/judge" "$flow engine/results/ engine/judge/" "$e"/judge/*.[ch]
check_files "engine/rack" \
    "$counters engine/peer/ engine/xport/ engine/results/ engine/model/ engine/run/ engine/sweep/ engine/launch/ engine/path/ engine/rack/" \
    "$e"/rack/*.[ch]
# Nothing in engine/ outside these folders (a new subsystem gets a layer here first).
for d in "$e"/*/; do
    case $(basename "$d") in
    sim | sweep | model | path | launch | flow | counters | peer | doctor | xport | results | run | judge | rack | mixes | models) ;;
    *) bad "engine/$(basename "$d"): not in the layering (tests/common/layering.sh)" ;;
    esac
done

# ---- 3. views include the engine's public headers only ----
# What the front end may read: snapshots and the runner's calls (run/runner.h, with
# flow/flow_state.h and flow/fabric_snap.h inside them), thresholds, mixes and the mix
# builder, histograms, counters, results and compare. Not the transports (xport/), the peer agent (peer/), the
# simulator (sim/) or the flow contract (flow/flow.h): those are the engine's own business.
# The setup view's model presets read a model's shape and sizes (engine/model/, pure
# arithmetic) and make its mix (run/mix_model.h), as `fabtop mix --model` does. The explorer's
# Drill action calls the drill as `fabtop drill` does (run/drill.h: the options, the run, the
# document after every repetition). The doctor's text and the explorer's doctor key run the
# doctor as `fabtop doctor` does (run/doctor_run.h: both ends' facts, the rules, the walk).
public="engine/run/runner.h engine/run/drill.h engine/run/doctor_run.h engine/run/thresholds.h engine/run/mix_build.h
  engine/run/mix_model.h engine/model/model_config.h engine/model/model_size.h
  engine/flow/mix.h engine/flow/hist.h engine/flow/flow_state.h engine/flow/fabric_snap.h
  engine/counters/counters.h engine/results/"
only=engine/
check_files "tui/ (views)" "$public" "$src"/tui/*.[ch]
check_files "text/" "$public" "$src"/text/*.[ch]
only=

# ---- 4. front end: cli/, text/, tui/ ----
# text/ (plain-text renderings) includes neither curses nor tui/ nor cli/; tui/ (the
# explorer) never includes cli/; the libraries link the same way: fabtop_text links neither
# curses nor fabtop_tui nor fabtop_cli, fabtop_tui never links fabtop_cli.
inc='#[[:space:]]*include[[:space:]]*[<"]'
hits=$(grep -lE "$inc(n?curses|ncursesw/|term\.h|panel\.h|tui/|cli/)" "$src"/text/*.[ch] 2>/dev/null)
[ -z "$hits" ] || bad "text/ includes curses, tui/ or cli/: $hits"
hits=$(grep -lE "${inc}cli/" "$src"/tui/*.[ch] 2>/dev/null)
[ -z "$hits" ] || bad "tui/ includes cli/ headers: $hits"
hits=$(grep -lE 'NCURSES|Curses|fabtop_tui|fabtop_cli' "$src/text/CMakeLists.txt")
hits="$hits$(grep -lE 'fabtop_cli' "$src/tui/CMakeLists.txt")"
[ -z "$hits" ] || bad "a front-end library links a layer above it: $hits"
# Every file a cli/ source names outside its #include lines exists (beside it or from the
# top of the tree).
for f in "$src"/cli/*.[ch]; do
    for name in $(grep -vE '^#[[:space:]]*include' "$f" | grep -oE '[A-Za-z0-9_/-]+\.(c|h|md|sh)\b' | sort -u); do
        if [ ! -e "$src/$name" ] && [ ! -e "$src/cli/$name" ]; then
            bad "${f#"$src"/} names $name, which does not exist"
        fi
    done
done

if [ $fail = 0 ]; then
    echo "PASS: curses stays in the front end; engine/ layers (sim on common/ only); views" \
        "include public engine headers only; text/ uses neither tui/ nor cli/, tui/ never cli/;" \
        "cli/ cites files that exist"
fi
exit $fail
