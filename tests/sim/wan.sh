#!/bin/sh
# wan: the cluster-versus-WAN lesson (sim/wan) says what its numbers show: the same
# tensor-parallel step inside one site and between two sites 5 ms apart (a one-way
# propagation of 2 x 2.5 ms), and independent requests between the sites whose rate is
# their concurrency over the round trip. The lesson's text quotes these numbers; the test
# holds the simulation to them.
set -eu
FABTOP=${FABTOP_BIN:?FABTOP_BIN names the fabtop binary}
command -v jq >/dev/null 2>&1 || {
    echo "SKIP: jq is not installed"
    exit 77
}
dir=$(mktemp -d /tmp/fabtop-wan.XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$FABTOP" run --mix sim/wan -o "$dir/wan.json" >"$dir/out.txt" 2>&1 || {
    cat "$dir/out.txt"
    echo "FAIL: fabtop run --mix sim/wan"
    exit 1
}
flow() { jq -r --arg n "$1" ".phases[0].flows[] | select(.name == \$n) | $2" "$dir/wan.json"; }
site=$(flow tp-site '.points[0].latency.p50')
wan=$(flow tp-wan '.points[0].latency.p50')
req=$(flow requests-wan '.points[0].latency.p50')
ops=$(flow requests-wan '.conditions.sim.results.ops')
span=$(flow requests-wan '.conditions.sim.results.completion_us - .conditions.sim.results.start_us')
echo "tp-site p50 $site us, tp-wan p50 $wan us, requests-wan p50 $req us, $ops requests in $span us"
awk -v s="$site" -v w="$wan" -v r="$req" -v o="$ops" -v t="$span" 'BEGIN {
    bad = 0
    # 256 KiB at 100 Gb/s is 21 us on the wire; two hops of 500 ns and the switch add ~2 us.
    if (!(s > 20 && s < 30)) { print "FAIL: tp-site p50 " s " us, expected 20-30 us"; bad = 1 }
    # One way between sites: 5 ms of fibre plus the same 23 us.
    if (!(w > 5000 && w < 5100)) { print "FAIL: tp-wan p50 " w " us, expected 5000-5100 us"; bad = 1 }
    if (!(w / s > 150)) { print "FAIL: the WAN step is only " w / s "x the local one"; bad = 1 }
    # A request waits one round trip (10 ms); 64 in flight give 64 / 10 ms = 6400 per second.
    if (!(r > 10000 && r < 10200)) { print "FAIL: requests-wan p50 " r " us, expected ~10 ms"; bad = 1 }
    rate = o / (t / 1e6)
    if (!(rate > 6000 && rate < 6500)) { print "FAIL: " rate " requests/s, expected ~6400"; bad = 1 }
    printf "tp-wan / tp-site = %.0fx; requests between sites: %.0f per second\n", w / s, rate
    exit bad
}'
# The lesson quotes what was measured.
lesson=$(jq -r '.mix.lesson' "$dir/wan.json")
for want in "23 us" "5.03 ms" "218 times" "6,400 per second"; do
    case $lesson in
    *"$want"*) ;;
    *)
        echo "FAIL: the lesson lacks '$want'"
        exit 1
        ;;
    esac
done
echo "PASS: sim/wan"
