#!/usr/bin/env python3
"""flood: hostile connections to a fabtop agent, none with the key, for a test.

flood.py HOST PORT SECONDS N SRC... : N connections spread over the source addresses, of
five kinds in turn (idle, slowloris, garbage, wrong proof, idle reconnecting at once when a
refusal arrives); each reconnects when its connection ends. Prints how many connections it
made. Test code only."""
import json, os, select, socket, sys, time

host, port, secs, n = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
srcs = sys.argv[5:]
KINDS = ["idle", "slow", "garbage", "wrongkey", "spin"]


def frame(t, payload):
    return (len(payload) + 1).to_bytes(4, "big") + bytes([t]) + payload


def hello():
    return frame(1, json.dumps({"proto": "fabtop-ctl", "version": 1, "role": "client",
                                "nonce": os.urandom(32).hex()}).encode())


class Conn:
    def __init__(self, i):
        self.kind, self.src = KINDS[i % len(KINDS)], srcs[i % len(srcs)]
        self.open()

    def open(self):
        global made
        made += 1
        self.s = socket.socket()
        self.s.setblocking(False)
        self.s.bind((self.src, 0))
        try:
            self.s.connect((host, port))
        except BlockingIOError:
            pass
        self.out, self.sent, self.got, self.proved = b"", 0, b"", False
        self.next = time.time() + 0.05
        if self.kind == "garbage":
            self.out = b"\0\0" + os.urandom(46)
        elif self.kind in ("wrongkey", "slow"):
            self.out = hello()

    def restart(self):
        self.s.close()
        self.open()

    def tick(self, now):
        try:
            if self.kind == "slow":
                if now >= self.next and self.sent < len(self.out):
                    self.s.send(self.out[self.sent:self.sent + 1])
                    self.sent += 1
                    self.next = now + 0.2
            elif self.out and self.sent < len(self.out):
                self.sent += self.s.send(self.out[self.sent:])
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self.restart()

    def readable(self):
        try:
            d = self.s.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            d = b""
        if not d:
            return self.restart()
        self.got += d
        if self.kind == "wrongkey" and not self.proved and len(self.got) >= 5 and self.got[4] == 1:
            self.s.send(frame(2, os.urandom(32)))
            self.proved = True
        elif self.kind in ("spin", "garbage") or (self.kind == "wrongkey" and self.proved):
            self.restart()


made = 0
conns = [Conn(i) for i in range(n)]
end = time.time() + secs
while time.time() < end:
    now = time.time()
    for c in conns:
        c.tick(now)
    r, _, _ = select.select([c.s for c in conns], [], [], 0.02)
    ready = set(r)
    for c in conns:
        if c.s in ready:
            c.readable()
print(made)
