#!/usr/bin/env python3
"""domcheck: read the DOM headless Chromium rendered (--dump-dom) and check it against the
results document it came from.

usage: domcheck.py DOM KIND DOC [TEXT_REPORT]
  KIND run:   the quiet-vs-loaded table's cells are the summary's figures formatted as
              `fabtop report` formats them (us), the ratio, every flow's name, the mix's
              name, the start time, the units; the text summary's <pre> is what
              `fabtop report DOC` printed (TEXT_REPORT) up to the judgement; 4 figures
  KIND sweep: every rank's host, every verdict's message, the summary line (the last line
              of TEXT_REPORT); at least 2 figures
  KIND drill: the flows' names, the fault kind, each detection time as %.6f s; 1 figure
Prints what it checked; exit 1 on the first failure."""
import html.parser
import json
import sys


class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text, self.stack, self.svgs = [], [], 0
        self.tables, self.pres, self.ids = {}, [], {}
        self.cur_table = None
        self.in_pre = False
        self.in_svg = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.svgs += 1 if not self.in_svg else 0
            self.in_svg += 1
        if tag == "table" and "id" in a:
            self.cur_table = a["id"]
            self.tables[self.cur_table] = []
        if tag == "tr" and self.cur_table:
            self.tables[self.cur_table].append([])
        if tag in ("td", "th") and self.cur_table:
            self.tables[self.cur_table][-1].append("")
        if tag == "pre":
            self.in_pre = True
            self.pres.append("")
        if "id" in a:
            self.ids[a["id"]] = tag

    def handle_endtag(self, tag):
        if tag == "svg":
            self.in_svg -= 1
        if tag == "table":
            self.cur_table = None
        if tag == "pre":
            self.in_pre = False

    def handle_data(self, data):
        if self.in_svg:
            return
        self.text.append(data)
        if self.cur_table and self.tables[self.cur_table] and self.tables[self.cur_table][-1]:
            self.tables[self.cur_table][-1][-1] += data
        if self.in_pre:
            self.pres[-1] += data


def lat(v):
    """A latency as run_text formats it."""
    if v is None:
        return "n/a"
    return "%.2f" % v if v < 1000 else "%.1f" % v if v < 100000 else "%.0f" % v


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def has(text, needle, what):
    if needle not in text:
        fail("%s: %r not in the rendered text" % (what, needle))
    print("ok: %s: %r" % (what, needle))


def main():
    dom_path, kind, doc_path = sys.argv[1:4]
    text_report = open(sys.argv[4]).read() if len(sys.argv) > 4 else None
    d = Dom()
    d.feed(open(dom_path, encoding="utf-8").read())
    text = "".join(d.text)
    doc = json.load(open(doc_path))
    if kind == "run":
        if d.svgs != 4:
            fail("%d figures rendered, want 4" % d.svgs)
        has(text, "Mix " + doc["mix"]["name"], "mix name")
        has(text, doc["started_at"], "start time")
        names = {f["name"] for ph in doc["phases"] for f in ph["flows"]}
        for n in sorted(names):
            has(text, n, "flow name")
        s = doc["summary"]
        q, l = s["quiet"], s["loaded"]
        rows = {r[0].strip(): [c.strip() for c in r[1:]] for r in d.tables.get("qvl", []) if r}
        if rows.get("", [None])[:2] != ["quiet (us)", "loaded (us)"]:
            fail("the quiet-vs-loaded table's header is %r" % rows.get(""))
        for key, jk in (("p50", "p50"), ("p99", "p99"), ("p99.9", "p99.9"), ("max", "max")):
            want = [lat(q.get(jk)), lat(l.get(jk))]
            got = [c.strip() for c in rows.get(key, [])]
            if got != want:
                fail("row %s: %r, want %r (from %s)" % (key, got, want, doc_path))
            print("ok: row %s: quiet %s us, loaded %s us" % (key, *want))
        gq = "%.3f" % q["goodput_gbps"]
        if [c.strip() for c in rows.get("goodput (Gb/s)", [])][:1] != [gq]:
            fail("goodput row %r, want %s" % (rows.get("goodput (Gb/s)"), gq))
        has(text, "p99 loaded / quiet = %.2f" % s["p99_loaded_over_quiet"], "ratio")
        for unit in ("Gb/s", "(us)", "microseconds", " s"):
            has(text, unit, "unit")
        summary = next((p for p in d.pres if p.startswith("mix ")), None)
        if summary is None:
            fail("no <pre> with the text summary")
        cut = text_report.find("\nlikely causes")
        want = text_report[:cut + 1] if cut >= 0 else text_report
        if not want.startswith(summary) or len(summary) < len(want) - 2:
            fail("the page's text summary differs from `fabtop report`'s:\n%s\n---\n%s" %
                 (summary[:600], want[:600]))
        print("ok: the text summary is fabtop report's (%d characters)" % len(summary))
    elif kind == "sweep":
        if d.svgs < 2:
            fail("%d figures, want at least 2" % d.svgs)
        for r in doc["ranks"]:
            has(text, r["host"], "rank host")
        for v in doc.get("verdicts", []):
            has(text, v["message"], "verdict")
        last = text_report.rstrip("\n").split("\n")[-1]
        has(text, last, "summary line")
    elif kind == "drill":
        if d.svgs != 1:
            fail("%d figures, want 1" % d.svgs)
        has(text, doc["fault"]["kind"], "fault")
        for rep in doc["repetitions"]:
            for f in rep["flows"]:
                has(text, f["name"], "flow")
                if f.get("detect_s") is not None:
                    has(text, "%.6f" % f["detect_s"], "detect_s")
                if f.get("recover_s") is not None:
                    has(text, "%.6f" % f["recover_s"], "recover_s")
    print("PASS: %s page checked against %s" % (kind, doc_path))


main()
