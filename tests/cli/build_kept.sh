#!/bin/bash
# build_kept.sh - a build keeps the objects of the binaries' mains
# (build/obj/bench/*.o), so that a second `make` has nothing to do instead
# of recompiling and relinking every binary.
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
missing=""
for c in bench/*.c; do
	o="$B/obj/bench/$(basename "${c%.c}").o"
	[ -f "$o" ] || missing="$missing $o"
done
[ -z "$missing" ] && echo "ok build keeps the mains' objects" || echo "not ok build keeps the mains' objects: missing$missing"
exit 0
