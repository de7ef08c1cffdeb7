#!/usr/bin/env python3
"""check-rules-doc.py DOC RULES [--params PARAMS] SRC... - docs/health_report.md
against the rule table (RULES: the output of `health_report rules`), its
numbers (PARAMS: the output of `health_report rules --params`) and the
judge's sources (SRC: report/judge/*.c). Prints one problem a line, or
"OK N rules"; exits 1 on a problem.

- the block between <!-- rules:begin --> and <!-- rules:end --> of DOC is
  RULES exactly (a row missing, added or changed is named);
- every code in the first column of DOC's other tables headed "code" whose
  cells are `backticked` reason codes (the verdict, curve, inventory and
  power-cap tables) is a rule;
- with PARAMS, the numbers: every parameter the table prints is in its
  rule's row of DOC as the table prints it (a number changed in the docs,
  or in the table, is named), and a parameter several rows carry has one
  value in all of them (the judge reads it from one of them);
- every reason code the sources pass to add_reason(), curve_add(), emit() or
  fn() is a rule, and every rule's code and function appear in the sources.
"""
import re
import sys


def rows(text):
    return {m.group(1): line for line in text.splitlines()
            for m in [re.match(r"\| `([a-z_]+)` \|", line)] if m}


def numbers(line):
    return set(re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.]?\d)", line))


def check_params(path, got, errs):
    """The parameters against the docs' rows @got; problems into @errs."""
    seen = {}
    for line in open(path).read().splitlines():
        f = line.split("\t")
        if len(f) != 5:
            errs.append("%s: not a parameter line: %r" % (path, line))
            continue
        code, name, value, shown, where = f
        if name in seen and seen[name][1] != value:
            errs.append("parameter %s differs between rows %s (%s) and %s (%s)"
                        % (name, seen[name][0], seen[name][1], code, value))
        seen.setdefault(name, (code, value))
        if where == "shown" and code in got and shown not in numbers(got[code]):
            errs.append("the row of %s: its parameter %s is %s in the table, not in %s"
                        % (code, name, shown, "the docs"))


def main():
    args = sys.argv[1:]
    params = None
    if len(args) > 3 and args[2] == "--params":
        params = args[3]
        del args[2:4]
    doc, rules_path, srcs = args[0], args[1], args[2:]
    d, rules = open(doc).read(), open(rules_path).read()
    errs = []
    m = re.search(r"<!-- rules:begin[^>]*-->\n(.*?)<!-- rules:end -->", d, re.S)
    if not m:
        errs.append("%s: no rules:begin / rules:end block" % doc)
        block = ""
    else:
        block = m.group(1)
    want, got = rows(rules), rows(block)
    for c in sorted(set(want) - set(got)):
        errs.append("rule %s has no row in %s" % (c, doc))
    for c in sorted(set(got) - set(want)):
        errs.append("%s lists %s, which is not a rule" % (doc, c))
    for c in sorted(set(want) & set(got)):
        if want[c] != got[c]:
            errs.append("%s: the row of %s differs from the rule table" % (doc, c))
    if params:
        check_params(params, got, errs)
    if not errs and block != rules:
        errs.append("%s: the rule table block differs from `health_report rules` (order or header)" % doc)
    # the other code tables of the doc
    rest = d.replace(block, "")
    for t in re.finditer(r"^\| code \|.*\n\|[-| ]+\|\n((?:\|.*\n)+)", rest, re.M):
        for line in t.group(1).splitlines():
            first = line.split("|")[1]
            for c in re.findall(r"`([a-z_]+)`", first):
                if c not in want:
                    errs.append("%s: code %s in a table is not a rule" % (doc, c))
    # the sources
    src = "\n".join(open(f).read() for f in srcs)
    emitted = set(re.findall(r'(?:add_reason|curve_add|emit|fn)\([^;]*?"([a-z_]+)"', src, re.S))
    emitted |= set(re.findall(r'"(memory_low|compute_low)"', src))
    for c in sorted(emitted - set(want)):
        errs.append("the sources add reason %s, which is not a rule" % c)
    for c in sorted(want):
        if '"%s"' % c not in src:
            errs.append("rule %s: its code is not in the sources" % c)
    for f in set(re.findall(r"\| `([a-z_]+)` \|\n", rules)):
        if not re.search(r"\b%s\(" % f, src):
            errs.append("a rule's function %s is not in the sources" % f)
    print("\n".join(errs) if errs else "OK %d rules" % len(want))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
