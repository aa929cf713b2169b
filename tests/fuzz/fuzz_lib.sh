# shellcheck shell=sh
# fuzz_lib.sh: shell functions shared by run_short.sh (ctest) and scripts/fuzz.sh (long
# runs): the sanitizer environment, libFuzzer's final numbers, and who is to blame for a
# crash: fabtop's own code, or libhwloc (which crashes on some malformed XML by itself).
# Sourced, POSIX sh; set FUZZ_LIB_DIR to this file's directory first.

# fuzz_env: symbolized stacks (needed to tell interceptors from fabtop frames), fatal UBSan.
fuzz_env() {
    if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ]; then
        for s in llvm-symbolizer llvm-symbolizer-14 /usr/lib/llvm-14/bin/llvm-symbolizer; do
            p=$(command -v "$s" 2>/dev/null) && { export ASAN_SYMBOLIZER_PATH="$p"; break; }
        done
    fi
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
    export LSAN_OPTIONS="suppressions=$FUZZ_LIB_DIR/lsan-hwloc.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
}

# fuzz_group FINDINGS: one line per distinct finding (kind, whose, frame) with its count and
# one example file, from fuzz_triage's lines.
fuzz_group() {
    sed 's/ (BuildId: [0-9a-f]*)//; s/+0x[0-9a-f]*)/)/' "$1" | awk '
        { key = $1 " " $2; f = $3; $1 = $2 = $3 = ""; sub(/^ +/, ""); key = key " " $0
          if (!(key in n)) { order[++k] = key; ex[key] = f }; n[key]++ }
        END { for (i = 1; i <= k; i++) printf "%5d %s\n        e.g. %s\n", n[order[i]], order[i], ex[order[i]] }'
}

# fuzz_blame REPORT_FILE: print "hwloc FRAME" or "fabtop FRAME" for a sanitizer or libFuzzer
# crash report. The rule: walk the first stack from frame #0 and skip what is neither fabtop
# nor hwloc: frames of the fuzz binary without a source line (the sanitizer runtime, its
# interceptors of malloc, strlen, memcpy..., libFuzzer: fabtop's code is built with -g, so its
# frames have one), libc, the C++ runtime, and source lines under /usr/lib, /usr/include or
# in glibc's tree.
# The first frame left decides: in libhwloc.so or libxml2.so it is hwloc's own crash; any
# other (fabtop's code, another library fabtop calls, or no stack at all) is fabtop's. A
# fabtop frame deeper in the stack (fabtop called hwloc) does not count: hwloc must not crash
# on any file.
fuzz_blame() {
    awk '
        /^ *#[0-9]+ 0x/ {
            if (done) next
            line = $0
            sub(/^ *#[0-9]+ 0x[0-9a-f]+ /, "", line)
            if (match(line, /\([^()]*\+0x[0-9a-f]+\)/)) {
                mod = substr(line, RSTART + 1, RLENGTH - 2)
                sub(/\+0x.*/, "", mod)
                if (mod ~ /libhwloc\.so|libxml2\.so/) who = "hwloc"
                else if (mod !~ /\.so/ || mod ~ /libc\.so|ld-linux|libstdc\+\+|libgcc_s|libm\.so/) next
                else who = "fabtop"
            } else if (line ~ /[ (]\/usr\/(lib|include)\/|[ (](nptl|sysdeps|stdlib|csu|libio|string|signal|malloc|assert)\/[^ ]*:[0-9]/) {
                next
            } else who = "fabtop"
            print who, line
            done = 1
        }
        END { if (!done) print "fabtop (no stack in the report)" }
    ' "$1"
}

# fuzz_stats LOG: "EXECS COV FT CORPUS" from libFuzzer's output (plain or fork mode), the
# last status line; zeros when there is none.
fuzz_stats() {
    awk '
        /^#[0-9]+/ {
            n = $1; sub(/^#/, "", n); sub(/:$/, "", n)
            cov = ft = corp = 0
            for (i = 2; i <= NF; i++) {
                if ($i == "cov:") cov = $(i + 1)
                if ($i == "ft:") ft = $(i + 1)
                if ($i == "corp:") { corp = $(i + 1); sub(/\/.*/, "", corp) }
            }
            last = n " " cov " " ft " " corp
        }
        END { print (last ? last : "0 0 0 0") }
    ' "$1"
}

# fuzz_triage BIN DIR: replay every finding in DIR (crash-, leak-, timeout-, oom-) once,
# save its report beside it (FILE.txt) and print "KIND WHO FILE FRAME" lines; WHO is fabtop,
# hwloc, or gone for a finding that no longer reproduces.
fuzz_triage() {
    for a in "$2"/crash-* "$2"/leak-* "$2"/timeout-* "$2"/oom-*; do
        [ -f "$a" ] || continue
        case $a in *.txt) continue ;; esac
        kind=$(basename "$a" | sed 's/-.*//')
        if "$1" -timeout=30 -rss_limit_mb=2048 "$a" >"$a.txt" 2>&1; then
            echo "$kind gone $a no longer reproduces (fixed since it was found)"
            continue
        fi
        line=$(fuzz_blame "$a.txt")
        # A broken property of fabtop's (fuzz_require) is named by its message.
        msg=$(grep -m1 '^fuzz: ' "$a.txt" | cut -c1-110)
        [ -n "$msg" ] && line="${line%% *} $msg"
        echo "$kind ${line%% *} $a ${line#* }"
    done
}
