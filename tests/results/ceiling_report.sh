#!/bin/sh
# ceiling_report: a run's document with a flow's path ceiling (docs/diagnosis.md) prints, in
# `fabtop report`, the ceiling, the term that sets it and the largest point's goodput as a
# percentage of it (90 / 98.0359 = 91.8 %; copies: each direction's); a ceiling with no rate
# known prints n/a; and
# `fabtop topo --ceiling` on the XE8640 export names the narrowest term of each path
# (skipped without the shared data).
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
. "$(dirname "$0")/../common/cli_lib.sh"
cat >"$tmp/doc.json" <<'DOC'
{"format":"fabtop-results","version":1,"phases":[{"name":"loaded","flows":[{"name":"f","transport":"verbs","op":"stream","role":"foreground","direction":"tx","latency_kind":"none","points":[{"size_bytes":65536,"measured":true,"complete":true,"goodput_gbps":50},{"size_bytes":1048576,"measured":true,"complete":true,"goodput_gbps":90}],"ceiling":{"path":"mlx5_0 port 1, RoCE v2, 1 MiB messages","gbps":98.0359,"narrowest":"port payload","terms":[{"name":"port payload","kind":"limit","value":98.0359,"unit":"Gb/s"}]},"conditions":{}},{"name":"g","transport":"verbs","op":"stream","role":"background","direction":"tx","latency_kind":"none","points":[],"ceiling":{"path":"mlx5_1 port 1, InfiniBand, 1 MiB messages","gbps":null,"terms":[]},"conditions":{}}]}]}
DOC
"$bin" report "$tmp/doc.json" >"$tmp/out" 2>&1 || fail "report: status $?"
grep -q "ceiling: 98.04 Gb/s of payload, set by port payload (mlx5_0 port 1, RoCE v2, 1 MiB messages); 1MiB: 91.8% of it" "$tmp/out" ||
    fail "no ceiling line: $(grep ceiling "$tmp/out")"
grep -q "ceiling: n/a (mlx5_1 port 1, InfiniBand, 1 MiB messages: no rate or link known)" "$tmp/out" ||
    fail "no n/a ceiling line: $(grep ceiling "$tmp/out")"
"$bin" report --json "$tmp/doc.json" >"$tmp/json" 2>&1 || fail "report --json: status $?"
grep -q '"narrowest":[[:space:]]*"port payload"' "$tmp/json" || fail "report --json lost the ceiling"
# Copies on two GPUs (the H200 machine's pinned H2D, 58.57 GB/s): 58.57 x 8 / 921.825 = 50.8 %
cat >"$tmp/copy.json" <<'DOC'
{"format":"fabtop-results","version":1,"phases":[{"name":"loaded","flows":[{"name":"h2d","transport":"nccl","op":"copy","role":"background","direction":"tx","latency_kind":"per_operation","points":[{"size_bytes":67108864,"measured":true,"complete":true,"ops":10,"copy":{"h2d_GBps":58.57,"d2h_GBps":null}}],"ceiling":{"path":"GPU0+GPU1 <-> host memory, PCIe, at once","gbps":921.825,"narrowest":"host paths, summed","terms":[]},"conditions":{}}]}]}
DOC
"$bin" report "$tmp/copy.json" >"$tmp/copy.out" 2>&1 || fail "report copy: status $?"
grep -q "ceiling: 921.83 Gb/s of payload, set by host paths, summed (GPU0+GPU1 <-> host memory, PCIe, at once); 64MiB h2d: 50.8% of it" "$tmp/copy.out" ||
    fail "copy ceiling line: $(grep ceiling "$tmp/copy.out")"

xml=${FABTOP_SHARED_DATA:-../shared/data}/hwloc-xml/flux-core_ipa20.xml
if [ -f "$xml" ]; then
    "$bin" topo --input "$xml" --ceiling >"$tmp/topo" 2>&1 || fail "topo --ceiling: status $?"
    grep -q "mlx5_0 port 1, InfiniBand (assumed), 1 MiB messages: 230.46 Gb/s of payload, set by NIC PCIe link" "$tmp/topo" ||
        fail "topo: mlx5_0 $(grep 'mlx5_0 port' "$tmp/topo")"
    grep -q "GPU0 <-> its NVLink peers, all at once: 3600.00 Gb/s of payload, set by NVLink total" "$tmp/topo" ||
        fail "topo: GPU0 NVLink"
    grep -q "port rate *n/a Gb/s" "$tmp/topo" || fail "topo: port rate not n/a"
fi
[ "$fails" -eq 0 ] || exit 1
echo "ceiling report: ok"
