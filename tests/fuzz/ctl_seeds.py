#!/usr/bin/env python3
"""ctl_seeds: write the seed corpora of the control-channel targets (fuzz_ctl_agent,
fuzz_ctl_client, fuzz_ctl_requests) into corpus/ctl_*: hellos of both roles, proofs,
refusals of every code, responses, and one file of requests per transport. Run from
tests/fuzz; the files are committed, this script says how they were made."""
import json, os

def frame(t, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return (len(payload) + 1).to_bytes(4, "big") + bytes([t]) + payload

HELLO, AUTH, REQUEST, RESPONSE, ERROR = 1, 2, 3, 4, 5
N = "ab" * 32

def hello(role, **extra):
    d = {"proto": "fabtop-ctl", "version": 1, "role": role, "nonce": N}
    d.update(extra)
    return frame(HELLO, json.dumps(d, separators=(",", ":")))

def refusal(code, msg, **extra):
    d = {"code": code, "message": msg, "version": 1}
    d.update(extra)
    return frame(ERROR, json.dumps(d, separators=(",", ":")))

def put(target, name, data):
    with open(os.path.join("corpus", target, name), "wb") as f:
        f.write(data)

# The agent's side: what a client sends.
put("ctl_agent", "hello", hello("client"))
put("ctl_agent", "hello-early", hello("client", time=1767225600, early="cd" * 32))
put("ctl_agent", "hello-auth", hello("client") + frame(AUTH, b"\x11" * 32))
put("ctl_agent", "hello-auth-short", hello("client") + frame(AUTH, b"12345"))
put("ctl_agent", "version2", hello("client", version=2))
put("ctl_agent", "role-agent", hello("agent"))
put("ctl_agent", "not-json", frame(HELLO, "{not json"))
put("ctl_agent", "request-first", frame(REQUEST, '{"type":"echo"}'))
put("ctl_agent", "oversize", b"\xff\xff\xff\xf0\x01")
put("ctl_agent", "http", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")

# The client's side, first byte even: the unauthenticated agent.
put("ctl_client", "hello", b"\0" + hello("agent"))
put("ctl_client", "hello-auth", b"\0" + hello("agent") + frame(AUTH, b"\x22" * 32))
put("ctl_client", "busy-retry", b"\0" + refusal("busy", "busy: 4 handshakes from 10.0.0.5 at once, limit 4 per address", retry_ms=100))
for code in ("version", "auth", "busy", "denied", "malformed", "toolarge", "timeout", "shutdown"):
    put("ctl_client", "refused-" + code, b"\0" + refusal(code, "the agent says no", version=1 if code != "version" else 7))
put("ctl_client", "own-nonce", b"\0" + hello("client"))
# ... first byte odd: MAC'd frames after a real handshake (u8 type | u16 length | payload).
def mframe(t, payload):
    payload = payload.encode() if isinstance(payload, str) else payload
    return bytes([t]) + len(payload).to_bytes(2, "big") + payload
hello_reply = json.dumps({"type": "hello", "id": 1, "ok": True, "host": "agent7", "fabtop": "0.1",
                          "caps": {"max_sessions": 8, "max_rate_gbps": 10, "max_flows": 4, "nccl": False}})
echo_reply = lambda i, ok: json.dumps({"type": "echo", "id": i, "ok": ok} if ok else
                                       {"type": "echo", "id": i, "ok": False, "errno": 22, "error": "echo: no"})
put("ctl_client", "auth-hello", b"\1" + mframe(RESPONSE, hello_reply))
put("ctl_client", "auth-echoes", b"\1" + mframe(RESPONSE, hello_reply) + mframe(RESPONSE, echo_reply(2, True)) +
    mframe(RESPONSE, echo_reply(3, False)) + mframe(RESPONSE, echo_reply(1, True)))
put("ctl_client", "auth-refused", b"\1" + mframe(ERROR, json.dumps({"code": "shutdown", "message": "the agent is shutting down"})))
put("ctl_client", "auth-wrong-id", b"\1" + mframe(RESPONSE, hello_reply.replace('"id": 1', '"id": 9')))
put("ctl_client", "auth-not-json", b"\1" + mframe(RESPONSE, "[1,2"))

# Requests, one per line, per transport.
def reqs(name, lines):
    put("ctl_requests", name, ("\n".join(json.dumps(l, separators=(",", ":")) if not isinstance(l, str) else l
                                         for l in lines)).encode())
reqs("builtins", [{"type": "hello", "id": 1, "host": "x"}, {"type": "info", "id": 2},
                  {"type": "echo", "id": 3, "data": {"n": 1, "s": "ping"}}, {"type": "nosuch", "id": 4},
                  {"id": 5}, "[1,2,3]", "{not json", {"type": "bye", "id": 6}])
tcp = {"type": "tcp.open", "id": 1, "op": "stream", "direction": "rx", "conns": 2, "size": 65536, "rate_gbps": 1}
reqs("tcp", [tcp, dict(tcp, id=2, op="pingpong", direction="tx", conns=1, size=64),
             dict(tcp, id=3, op="rr", direction="bidir", conns=100, size=4194304, rate_gbps=1e6),
             dict(tcp, id=4, op="copy"), dict(tcp, id=5, size=0), dict(tcp, id=6)])
peer = {"gid": "00000000000000000000ffff0a000001", "lid": 0, "mtu": 3, "link_layer": 2,
        "addr": "7f0000001000", "rkey": 4660, "slot": 128, "nonce_addr": "7f0000002000",
        "nonce_rkey": 4661, "qpn": [17], "psn": [1234]}
vopen = {"type": "verbs.open", "id": 1, "op": "pingpong", "direction": "tx", "verb": "write",
         "latency": "pingpong", "size": 64, "depth": 16, "timeout": 14, "retry_cnt": 7, "dscp": 26,
         "sl": 0, "rate_gbps": 0, "connect": "ctl", "peer": peer}
reqs("verbs", [vopen, {"type": "verbs.nonce", "id": 2}, {"type": "verbs.echo", "id": 3, "nonces": ["00" * 32]},
               {"type": "verbs.size", "id": 4, "qp": 0, "size": 8},
               dict(vopen, id=5, connect="rdmacm", op="stream", direction="rx", verb="send")])
nopen = {"type": "nccl.open", "id": 1, "collective": "all_reduce", "dtype": "float", "redop": "sum",
         "root": 0, "in_place": False, "ncomms": 2, "bound_s": 3, "gpus": [1], "sizes": [1024, 1048576],
         "algo": "Ring", "proto": "Simple"}
reqs("nccl", [nopen, {"type": "nccl.init", "id": 2, "nranks": 2, "first_rank": 1},
              {"type": "nccl.batch", "id": 3, "point": 0, "sync": 1, "n": 10, "graph": True, "est_ns": 1000},
              {"type": "nccl.close", "id": 4}, dict(nopen, id=5, gpus="all", bound_s=1e300, root=1e300),
              {"type": "nccl.init", "id": 6, "nranks": 2, "first_rank": 1, "ids": ["00" * 128]}])
reqs("mixed", [tcp, {"type": "verbs.size", "id": 2, "qp": 0, "size": 8}, nopen,
               {"type": "nccl.batch", "id": 4, "point": 0, "n": 1}, {"type": "echo", "id": 5}])
