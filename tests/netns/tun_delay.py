#!/usr/bin/env python3
"""tun_delay: a user-space delay line between two TUN devices (this kernel has no netem).

Usage: tun_delay.py TUN_A TUN_B DELAY_MS [PIDFILE]

Every IP packet read from TUN_A is written to TUN_B DELAY_MS milliseconds later, and every
packet read from TUN_B to TUN_A, in order (a fixed delay keeps order). The devices must
already exist in the current network namespace (ip tuntap add mode tun NAME); the kernel
routes into one and receives out of the other, so the namespace forwards packets through it
(each forward decrements the TTL, as a router does). Runs until killed.
"""
import fcntl
import heapq
import os
import select
import struct
import sys
import time

TUNSETIFF = 0x400454CA  # linux/if_tun.h: _IOW('T', 202, int)
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000


def open_tun(name):
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def main():
    a, b = open_tun(sys.argv[1]), open_tun(sys.argv[2])
    delay = float(sys.argv[3]) / 1000.0
    if len(sys.argv) > 4:
        with open(sys.argv[4], "w") as f:
            f.write("%d\n" % os.getpid())
    other = {a: b, b: a}
    due = []  # (time, seq, fd, packet)
    seq = 0
    while True:
        now = time.monotonic()
        while due and due[0][0] <= now:
            _, _, fd, pkt = heapq.heappop(due)
            try:
                os.write(fd, pkt)
            except OSError:
                pass  # a full queue or a device going away: the packet is lost
        wait = max(0.0, due[0][0] - now) if due else 1.0
        r, _, _ = select.select([a, b], [], [], wait)
        for fd in r:
            while True:
                try:
                    pkt = os.read(fd, 65536)
                except BlockingIOError:
                    break
                seq += 1
                heapq.heappush(due, (time.monotonic() + delay, seq, other[fd], pkt))


if __name__ == "__main__":
    main()
