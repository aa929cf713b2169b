#!/usr/bin/env python3
"""validate: the JSON Schemas under docs/schema/ against the documents fabtop reads and writes.

Usage: validate.py SCHEMA_DIR check-schemas
       validate.py SCHEMA_DIR mix FILE...       each FILE must be a valid fabtop-mix
       validate.py SCHEMA_DIR results FILE...   each FILE must be a valid results document
       validate.py SCHEMA_DIR not-mix FILE...   each FILE must be refused by the mix schema
       validate.py SCHEMA_DIR not-results FILE...
       validate.py SCHEMA_DIR auto FILE...      by each FILE's "format": a mix, a results
                                                document, or skipped (another document)

Prints one line per file (ok, or the first errors with their JSON path) and exits 1 when any
file does not come out as asked, 2 on bad usage. Works with python3-jsonschema 4.10 (Debian
bookworm: RefResolver) and later releases (the referencing registry).
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed (apt-get install python3-jsonschema)")
    sys.exit(77)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def validators(schema_dir):
    mix = load(schema_dir + "/mix.schema.json")
    res = load(schema_dir + "/results.schema.json")
    cls = jsonschema.Draft202012Validator
    try:
        from referencing import Registry, Resource

        reg = Registry().with_resources(
            [(mix["$id"], Resource.from_contents(mix)), (res["$id"], Resource.from_contents(res))]
        )
        return mix, res, cls(mix, registry=reg), cls(res, registry=reg)
    except ImportError:
        store = {mix["$id"]: mix, res["$id"]: res}
        return (
            mix,
            res,
            cls(mix, resolver=jsonschema.RefResolver.from_schema(mix, store=store)),
            cls(res, resolver=jsonschema.RefResolver.from_schema(res, store=store)),
        )


def deepest(err):
    """The most specific error under anyOf/oneOf, for a message that names the field."""
    while err.context:
        err = max(err.context, key=lambda e: len(list(e.absolute_path)))
    return err


def where(err):
    return "".join("[%d]" % p if isinstance(p, int) else "." + p for p in err.absolute_path) or "."


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    schema_dir, mode, files = argv[1], argv[2], argv[3:]
    mix, res, vmix, vres = validators(schema_dir)
    if mode == "check-schemas":
        for name, s in (("mix.schema.json", mix), ("results.schema.json", res)):
            jsonschema.Draft202012Validator.check_schema(s)
            print("ok: %s is a valid draft 2020-12 schema" % name)
        return 0
    if mode not in ("mix", "results", "not-mix", "not-results", "auto"):
        print("unknown mode %s" % mode)
        return 2
    v = vmix if mode.endswith("mix") else vres
    want_valid = not mode.startswith("not-")
    bad = 0
    for f in files:
        try:
            doc = load(f)
        except (OSError, ValueError) as e:
            print("FAIL: %s: cannot read it: %s" % (f, e))
            bad += 1
            continue
        if mode == "auto":
            fmt = doc.get("format") if isinstance(doc, dict) else None
            if fmt == "fabtop-mix":
                v = vmix
            elif fmt in ("fabtop-results", "fabtop-drill", "fabtop-sweep"):
                v = vres
            else:
                print("skip: %s (format %r)" % (f, fmt))
                continue
        errs = sorted(v.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
        if want_valid and errs:
            bad += 1
            print("FAIL: %s: %d error(s) against the %s schema" % (f, len(errs), "mix" if v is vmix else "results"))
            for e in errs[:5]:
                d = deepest(e)
                print("    at %s: %s" % (where(d), d.message[:300]))
        elif not want_valid and not errs:
            bad += 1
            print("FAIL: %s: the %s schema accepts it" % (f, mode[4:]))
        elif want_valid:
            print("ok: %s" % f)
        else:
            d = deepest(errs[0])
            print("ok: %s refused at %s: %s" % (f, where(d), d.message[:200]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
