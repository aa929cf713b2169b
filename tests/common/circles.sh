#!/bin/sh
# circles: no two source files call each other's functions. A file that calls a function
# defined in another, while that one calls a function defined in the first, is a circle: the
# two can be neither understood nor tested apart (the issue's "runner/xport_sim,
# sim_net/sim_nic, topo_lint/topo_fablint"). Read from the compiled objects, so it sees what
# the compiler saw (no comment, string or #if can fool it): for every object, the functions it
# defines (nm: T) and the symbols it needs from elsewhere (nm: U); a reference to a function
# defined in exactly one other source file is an edge from this file to that one. Calls of a
# function through a table of pointers count where the table names the function. Data (the
# transport tables a registry lists) is not a call. Longer cycles (a -> b -> c -> a) are not
# looked for.
#   circles.sh            (FABTOP_BUILD: the build directory, FABTOP_SRC: the sources)
# Exit 0 when there is none, 1 listing each pair and the functions both ways.
set -u
build=${FABTOP_BUILD:?set FABTOP_BUILD to the build directory}
src=${FABTOP_SRC:?set FABTOP_SRC to the source directory}
command -v nm >/dev/null || { echo "SKIP: no nm (binutils)"; exit 77; }
src=$(cd "$src" && pwd -P)
build=$(cd "$build" && pwd -P)

# Circles another change is breaking, as "a.c b.c" (sorted); each entry must still be a
# circle (a stale entry fails too), so the list empties as the fixes land. Empty: the last
# one (engine/run/runner.c and engine/xport/sim/xport_sim.c) went with issue 15's front door
# for the simulator. FABTOP_CIRCLES_ALLOWED sets the list (circles_selftest.sh: empty).
allowed=${FABTOP_CIRCLES_ALLOWED-""}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# Every object CMake built from a C source: .../CMakeFiles/TARGET.dir/REL.c.o, where REL is
# the source relative to the target's folder ("__" for ".."). Newest first, and one object
# per source: a build directory that outlived a change of targets still holds the old
# targets' objects, compiled from the sources as they were then.
find "$build" -path '*/CMakeFiles/*.dir/*' -name '*.c.o' -printf '%T@ %p\n' | sort -rn |
    cut -d' ' -f2- >"$tmp/objs"
[ -s "$tmp/objs" ] || { echo "SKIP: no objects under $build (build first)"; exit 77; }
: >"$tmp/seen"
while IFS= read -r o; do
    dir=${o%%/CMakeFiles/*}
    rel=${o#*/CMakeFiles/*.dir/}
    rel=$(printf '%s' "${rel%.o}" | sed 's#\(^\|/\)__\(/\|$\)#\1..\2#g; s#\(^\|/\)__\(/\|$\)#\1..\2#g')
    sub=${dir#"$build"}
    s=$(realpath -m "$src$sub/$rel")
    case $s in
    "$src"/*) s=${s#"$src"/} ;;
    *) continue ;; # generated outside the tree
    esac
    [ -f "$src/$s" ] || continue # its source is gone
    grep -qxF "$s" "$tmp/seen" && continue
    echo "$s" >>"$tmp/seen"
    nm -P "$o" 2>/dev/null | awk -v s="$s" '
        $2 == "T" { print "D", s, $1 }
        $2 == "U" { print "U", s, $1 }'
done <"$tmp/objs" | sort -u >"$tmp/syms"

awk '
    $1 == "D" { if (!($3 in def)) def[$3] = $2; else if (def[$3] != $2) dup[$3] = 1; next }
    $1 == "U" { use[++n] = $2 " " $3 }
    END {
        for (i = 1; i <= n; i++) {
            split(use[i], u, " ")
            f = u[2]
            if (!(f in def) || (f in dup) || def[f] == u[1])
                continue
            print u[1], def[f], f
        }
    }' "$tmp/syms" | sort -u >"$tmp/edges"

# Pairs with an edge each way, each listed once (a < b), with the functions both ways.
awk '
    {
        key = $1 " " $2
        if (key in fns)
            fns[key] = fns[key] ", " $3
        else
            fns[key] = $3
    }
    END {
        for (k in fns) {
            split(k, p, " ")
            back = p[2] " " p[1]
            if (p[1] < p[2] && (back in fns))
                print p[1], p[2], fns[k], "|", fns[back]
        }
    }' "$tmp/edges" | sort >"$tmp/pairs"

rc=0
while IFS= read -r line; do
    a=${line%% *}
    rest=${line#* }
    b=${rest%% *}
    fwd=${rest#* }
    back=${fwd#*| }
    fwd=${fwd%% |*}
    case " $allowed " in
    *" $a $b "*)
        echo "known (being fixed elsewhere): $a <-> $b"
        continue
        ;;
    esac
    echo "FAIL: $a and $b call each other: $a -> $b: $fwd; $b -> $a: $back"
    rc=1
done <"$tmp/pairs"
set -- $allowed
while [ $# -ge 2 ]; do
    grep -q "^$1 $2 " "$tmp/pairs" || {
        echo "FAIL: $1 <-> $2 is no longer a circle: remove it from circles.sh's allowed list"
        rc=1
    }
    shift 2
done
# Two files that #include each other (headers guard against the loop, not against the tangle).
for d in common topology engine cli text tui; do
    [ -d "$src/$d" ] && find "$src/$d" -name '*.[ch]'
done | while IFS= read -r f; do
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
        sed "s#^#${f#"$src"/} #"
done | sort -u >"$tmp/incs"
awk '{ inc[$1 " " $2] = 1 } END { for (k in inc) { split(k, p, " ");
        if (p[1] < p[2] && ((p[2] " " p[1]) in inc)) print p[1], p[2] } }' "$tmp/incs" |
    sort >"$tmp/incpairs"
while read -r a b; do
    echo "FAIL: $a and $b include each other"
    rc=1
done <"$tmp/incpairs"
nfiles=$(awk '{print $2}' "$tmp/syms" | sort -u | wc -l)
nedges=$(awk '{print $1, $2}' "$tmp/edges" | sort -u | wc -l)
[ $rc -eq 0 ] && echo "PASS: no two of $nfiles source files call each other ($nedges file-to-file calls)"
exit $rc
