#!/usr/bin/env python3
"""Sum the TAP results of test layers into the final line.

usage: tap-summary.py RESULTS_DIR LAYER...

The Makefile names the layers (CHECK_LAYERS, less CHECK_SKIP).  A layer
that should have run but left no results file counts as one failure, so a
layer that broke before testing cannot vanish from the count.
A "not ok ... # TODO" line is a known failure (TAP's meaning): listed and
counted apart, not as a failure.
"""
import os
import re
import sys

TAP = re.compile(r"^(not ok|ok)\b")
TODO = re.compile(r"#\s*TODO\b", re.IGNORECASE)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    d, layers = sys.argv[1], sys.argv[2:]
    total_pass = total_fail = total_todo = 0
    for layer in layers:
        path = os.path.join(d, layer + ".tap")
        if not os.path.exists(path):
            print("%-7s no results: the layer failed before running its tests" % layer)
            total_fail += 1
            continue
        p = f = t = 0
        with open(path) as fh:
            for line in fh:
                m = TAP.match(line)
                if m:
                    if m.group(1) == "ok":
                        p += 1
                    elif TODO.search(line):
                        t += 1
                        print("%-7s TODO %s" % (layer, line.strip()))
                    else:
                        f += 1
                        print("%-7s FAIL %s" % (layer, line.strip()))
        print("%-7s %d passed, %d failed%s" % (layer, p, f, ", %d TODO" % t if t else ""))
        total_pass += p
        total_fail += f
        total_todo += t
    if total_todo:
        print("%d known failures (TODO), not counted as failed" % total_todo)
    print("%d passed, %d failed" % (total_pass, total_fail))


if __name__ == "__main__":
    main()
