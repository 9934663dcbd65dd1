#!/usr/bin/env python3
"""Python's json module made as strict as pulse-pack's parser, to compare the two on a corpus.

Usage: strict_oracle.py FOLDER. For every FOLDER/<n>.json it reads FOLDER/<n>.swift ("reject" or the
canonical JSON pulse-pack produced) and prints one line per disagreement; nothing when they agree.

json.loads alone is more lenient than RFC 8259 in ways the tools refuse: it takes NaN and Infinity,
lone surrogates in \\u escapes, duplicate keys (the last wins), numbers that overflow to inf, a BOM, and
bytes in UTF-16/32. Those are checked here, on top of it.
"""
import json, math, os, sys

MAX_NESTING = 512
INT64 = (-2**63, 2**63 - 1)


class Reject(Exception):
    pass


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise Reject("duplicate key")
    return dict(pairs)


def reject_constant(name):
    raise Reject(name)


def check(value, depth=0):
    """Rejects lone surrogates and infinities; returns the value with ints past Int64 as floats."""
    if isinstance(value, (dict, list)):
        depth += 1
        if depth > MAX_NESTING:
            raise Reject("too deep")
    if isinstance(value, str):
        if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            raise Reject("lone surrogate")
        return value
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if INT64[0] <= value <= INT64[1] else float(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Reject("out of range")
        return value
    if isinstance(value, list):
        return [check(v, depth) for v in value]
    return {check(k): check(v, depth) for k, v in value.items()}


def same(a, b):
    """Equal as JSON values: booleans are not numbers; 1 and 1.0 are one number (pulse-pack writes
    integral doubles as integers)."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def strict(data):
    if data.startswith(b"\xef\xbb\xbf"):
        raise Reject("BOM")
    text = data.decode("utf-8")  # strict: overlong forms, encoded surrogates, > U+10FFFF all fail
    return check(json.loads(text, object_pairs_hook=no_duplicates, parse_constant=reject_constant))


def main(folder):
    names = sorted(n[:-5] for n in os.listdir(folder) if n.endswith(".json"))
    for name in names:
        with open(os.path.join(folder, name + ".json"), "rb") as f:
            data = f.read()
        with open(os.path.join(folder, name + ".swift"), "rb") as f:
            swift = f.read()
        try:
            ours = strict(data)
        except (Reject, ValueError, RecursionError) as error:
            if swift != b"reject":
                print(f"{name}: python rejects ({type(error).__name__}: {error}), pulse-pack accepts")
            continue
        if swift == b"reject":
            print(f"{name}: python accepts, pulse-pack rejects")
            continue
        theirs = check(json.loads(swift.decode("utf-8")))
        if not same(theirs, ours):
            print(f"{name}: different values: python {json.dumps(ours)[:200]} pulse-pack {swift[:200]!r}")
    print(f"compared {len(names)} documents", file=sys.stderr)


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    main(sys.argv[1])
