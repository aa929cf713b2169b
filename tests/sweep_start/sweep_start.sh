#!/bin/sh
# sweep_start: fabtop-sweep's start under a real OpenMPI mpirun on this host (no rack needed):
# outside a launcher (64 and the line with mpirun and srun examples), a Slurm step without
# PMIx (its environment, then MPI_Init's singleton: 64), 3 ranks gathered and the plan's
# header printed (0), then the refusals before the first round: 1 rank (64), bisection with
# 3 ranks (64), a rank of another fabtop version started from a second binary (65, both
# versions and the ranks named), a --groups file naming a host not in the job (65), one that
# does not parse (65), a missing one (66), --model layouts it cannot take (64) and a missing
# config (66), a collective's size under one byte a rank (64). Args: fabtop-sweep, the
# other-version binary.
set -u
sweep=${1:?fabtop-sweep}
other=${2:?the other-version binary}
bin=${FABTOP_BIN:?}
command -v mpirun >/dev/null || { echo "SKIP: mpirun is absent (openmpi-bin)"; exit 77; }
tmp=$(mktemp -d /tmp/fabtop-sweepstart.XXXXXX)
# Rank 0 publishes its live document under the runtime directory (as root without one,
# /run/fabtop): here, under this test's own directory.
export XDG_RUNTIME_DIR="$tmp"
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }
# Run as root in CI; the test starts no daemon and leaves nothing behind.
mpi() { timeout 60 mpirun --allow-run-as-root --oversubscribe --bind-to none "$@"; }

# expect STATUS PATTERN CMD...: CMD exits STATUS and its stderr holds one fabtop line
# matching PATTERN (mpirun's own notices around it aside).
expect() {
    want=$1 pat=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq "$want" ] || { cat "$tmp/out" "$tmp/err"; fail "$* exited $rc, expected $want"; }
    n=$(grep -cE '^fabtop( sweep)?: ' "$tmp/err")
    [ "$n" -eq 1 ] || { cat "$tmp/err"; fail "$*: $n fabtop lines on stderr, expected 1"; }
    grep -E '^fabtop( sweep)?: ' "$tmp/err" | grep -qE -- "$pat" || { cat "$tmp/err"; fail "$*: no line matching '$pat'"; }
    echo "ok: $want: $(grep -E '^fabtop( sweep)?: ' "$tmp/err" | cut -c1-150)"
}

# Outside a launcher: no singleton, the way to start it.
expect 64 "not started by mpirun or srun: .*'mpirun -np 8 .*' or 'srun --mpi=pmix " \
    env -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK -u SLURM_STEP_ID "$bin" sweep --pattern pairs
# A Slurm step of 4 tasks without --mpi=pmix: MPI_Init makes each task a world of 1.
expect 64 "srun started 4 tasks but MPI sees a world of 1 .*--mpi=pmix" \
    env SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_NTASKS=4 SLURM_LOCALID=0 "$sweep"
# A launcher's damaged variable.
expect 64 "OMPI_COMM_WORLD_SIZE='x' is not a number" env OMPI_COMM_WORLD_SIZE=x "$sweep"

# 3 ranks on this host: every rank gathered, the header printed, exit 0.
# Every rank's agent and tests on 127.0.0.1 (--listen): test traffic stays on loopback.
lo="--listen 127.0.0.1"
mpi -np 3 "$bin" sweep $lo --pattern pairs --pattern ring --duration 0.3 >"$tmp/out" 2>"$tmp/err" ||
    { cat "$tmp/out" "$tmp/err"; fail "mpirun -np 3 fabtop sweep exited $?"; }
cat "$tmp/out"
grep -q "^fabtop sweep .*: 3 ranks on 1 host, started by mpirun" "$tmp/out" || fail "no header line"
grep -q "^patterns: pairs ring; 0.3 s per test; on failure: continue" "$tmp/out" || fail "no patterns line"
host=$(hostname)
for r in 0 1 2; do
    grep -qE "^$r +$host +$r/3 " "$tmp/out" || fail "rank $r (local $r/3 on $host) not in the header"
done
[ "$(grep -c "^[0-9]" "$tmp/out")" -eq 3 ] || fail "not exactly 3 rank lines"
[ ! -s "$tmp/err" ] || { cat "$tmp/err"; fail "stderr not empty on success"; }
# --json and -o: the same ranks as a document, saved atomically.
grep -q "^fabtop sweep 3 ranks: 3/3 pairs measured, .*; status ok$" "$tmp/out" || fail "no summary line"
# The live document was published where it said, and removed at the end.
grep -qE "^live: fabtop --attach $tmp/fabtop/sweep-[0-9]+\.json$" "$tmp/out" || fail "no live: line"
[ -d "$tmp/fabtop" ] && [ -z "$(ls -A "$tmp/fabtop")" ] || fail "the live document was not removed"
mpi -np 2 "$sweep" $lo --duration 0.3 --json -o "$tmp/plan.json" >"$tmp/json" 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "--json -o exited $?"; }
python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
assert d == s, "stdout and -o differ"
assert [r["rank"] for r in d["ranks"]] == [0, 1], d["ranks"]
assert all(r["host"] == sys.argv[3] for r in d["ranks"])
assert d["format"] == "fabtop-sweep" and d["status"] == "ok", d["status"]
assert d["patterns"] == ["pairs"] and d["test_duration_s"] == 0.3
assert [(p["a"], p["b"]) for p in d["pairs"]] == [(0, 1)] and d["pairs"][0]["bw_ab_gbps"] > 0
assert all(r["address"].startswith("127.0.0.1:") for r in d["ranks"])
' "$tmp/json" "$tmp/plan.json" "$host" || fail "the JSON document is wrong"
echo "ok: 0: 3 ranks gathered and swept, the header and summary printed; --json and -o agree"

expect 64 "^fabtop sweep: 1 rank: a sweep needs at least 2" mpi -np 1 "$sweep"
expect 64 "bisection .* even number of them, not 3" mpi -np 3 "$sweep" -p pairs -p bisection
mpi -np 4 "$sweep" $lo --duration 0.3 -p bisection >/dev/null 2>&1 || fail "bisection with 4 ranks exited $?"

# A rank from a second binary announcing another fabtop version: refused on every rank.
ver=$("$bin" --version | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -1)
expect 65 "mismatched fabtop versions: $ver on ranks 0-1, 0\.0\.0-other on rank 2" \
    mpi -np 2 "$sweep" : -np 1 "$other"
expect 65 "mismatched fabtop versions: 0\.0\.0-other on rank 0, $ver on ranks 1-2" \
    mpi -np 1 "$other" : -np 2 "$sweep"

# --groups: a host not in the job, a file that does not parse, a missing file.
printf '# leaves\nleaf1 %s\nleaf2 rk-h9 rk-h10\n' "$host" >"$tmp/groups"
expect 65 "$tmp/groups: line 3 names host 'rk-h9', which is not in this job" \
    mpi -np 2 "$sweep" --groups "$tmp/groups"
printf 'leaf1 %s\nleaf2\n' "$host" >"$tmp/groups"
expect 65 "$tmp/groups: line 2: group with no host: 'leaf2'" mpi -np 2 "$sweep" --groups "$tmp/groups"
printf 'leaf1 %s\nleaf2 %s\n' "$host" "$host" >"$tmp/groups"
expect 65 "line 2: a host already in a group: '$host'" mpi -np 2 "$sweep" --groups "$tmp/groups"
expect 66 "$tmp/nothere: No such file" mpi -np 2 "$sweep" --groups "$tmp/nothere"
printf 'leaf1 %s\n' "$host" >"$tmp/groups"
mpi -np 2 "$sweep" $lo --duration 0.3 --groups "$tmp/groups" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "good --groups exited $?"; }
grep -q "groups: 1 from $tmp/groups" "$tmp/out" || { cat "$tmp/out"; fail "the header does not name the groups"; }
# A usage error: said once (rank 0), 64 everywhere.
expect 64 "--pattern takes pairs, incast, bisection, ring, allreduce or alltoall, not 'all'" mpi -np 3 "$sweep" -p all
# --model: its layout at TP (allreduce) or EP (alltoall) = the ranks, refused as fabtop mix
# refuses it (64); a model without experts for alltoall (64); a size given beside it (64); a
# missing config.json (66).
expect 64 "at TP 3 \\(the ranks\\): --tp 3 does not divide" mpi -np 3 "$sweep" -p allreduce --model Llama-3.1-70B
expect 64 "has no experts" mpi -np 2 "$sweep" -p alltoall --model Llama-3.1-70B
expect 64 "leave out --allreduce-size" mpi -np 2 "$sweep" -p allreduce --model Llama-3.1-70B --allreduce-size 1MiB
expect 66 "$tmp/none.json: cannot open" mpi -np 2 "$sweep" -p allreduce --model "$tmp/none.json"
expect 64 "--allreduce-size is S of the all-reduce across the 3 ranks" mpi -np 3 "$sweep" -p allreduce --allreduce-size 2
# -o into a directory that does not exist: 73 before any round.
expect 73 "$tmp/no/dir/plan.json" mpi -np 2 "$sweep" -o "$tmp/no/dir/plan.json"
echo "PASS: fabtop sweep's start: launcher checks, rendezvous of 3 ranks, every refusal with its status"
