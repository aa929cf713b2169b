#!/usr/bin/env python3
"""pngcheck: decode a PNG with zlib alone (no imaging library) and check that something is
drawn on it: its size, the share of pixels that are not the background (the corner pixel),
and that given colours are present.

usage: pngcheck.py FILE [--size WxH] [--min-drawn FRACTION] [--colour RRGGBB[:TOL]]...
Prints one line of figures; exit 0 when every check holds, 1 otherwise."""
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        (ln,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + ln]
        pos += 12 + ln
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError("unsupported PNG: depth %d colour type %d interlace %d" %
                         (depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 0xff
            elif f == 2:
                line[x] = (line[x] + b) & 0xff
            elif f == 3:
                line[x] = (line[x] + ((a + b) >> 1)) & 0xff
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[x] = (line[x] + pr) & 0xff
        rows.append(line)
        prev = line
    px = [tuple(r[x * bpp:x * bpp + 3]) for r in rows for x in range(w)]
    return w, h, px


def main(argv):
    path, checks = argv[1], argv[2:]
    w, h, px = decode(path)
    bg = px[0]
    drawn = sum(1 for p in px if p != bg) / len(px)
    ok = True
    out = ["%s: %dx%d, %.1f%% drawn (background %02x%02x%02x)" % (path, w, h, drawn * 100, *bg)]
    i = 0
    while i < len(checks):
        opt, val = checks[i], checks[i + 1]
        i += 2
        if opt == "--size":
            ww, hh = (int(v) for v in val.split("x"))
            if (w, h) != (ww, hh):
                out.append("FAIL size %dx%d, want %s" % (w, h, val))
                ok = False
        elif opt == "--min-drawn":
            if drawn < float(val):
                out.append("FAIL drawn %.3f < %s" % (drawn, val))
                ok = False
        elif opt == "--colour":
            hexv, _, tol = val.partition(":")
            tol = int(tol or 0)
            want = tuple(int(hexv[k:k + 2], 16) for k in (0, 2, 4))
            n = sum(1 for p in px if all(abs(p[k] - want[k]) <= tol for k in range(3)))
            out.append("#%s: %d px" % (hexv, n))
            if n < 20:
                out.append("FAIL colour #%s (tolerance %d) on %d pixels" % (hexv, tol, n))
                ok = False
    print("; ".join(out))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
