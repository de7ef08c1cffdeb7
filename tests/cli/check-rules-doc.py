#!/usr/bin/env python3
"""check-rules-doc.py DOC RULES SRC... - docs/health_report.md against the
rule table (RULES: the output of `health_report rules`) and the judge's
sources (SRC: report/judge/*.c). Prints one problem a line, or "OK N rules";
exits 1 on a problem.

- the block between <!-- rules:begin --> and <!-- rules:end --> of DOC is
  RULES exactly (a row missing, added or changed is named);
- every code in the first column of DOC's other tables headed "code" whose
  cells are `backticked` reason codes (the verdict, curve, inventory and
  power-cap tables) is a rule;
- every reason code the sources pass to add_reason(), curve_add(), emit() or
  fn() is a rule, and every rule's code and function appear in the sources.
"""
import re
import sys


def rows(text):
    return {m.group(1): line for line in text.splitlines()
            for m in [re.match(r"\| `([a-z_]+)` \|", line)] if m}


def main():
    doc, rules_path, srcs = sys.argv[1], sys.argv[2], sys.argv[3:]
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
