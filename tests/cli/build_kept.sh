#!/bin/bash
# build_kept.sh - make keeps the objects of the binaries' mains
# (obj/bench/*.o): a dry run of a binary into a scratch build directory
# plans no "rm" of its object (make's clean-up of intermediate files), so a
# second `make` has nothing to do instead of recompiling every main.
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
cd "$(dirname "$0")/../.." || exit 1
T=$(mktemp -d /tmp/build_kept-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
unset MAKEFLAGS MFLAGS MAKELEVEL
out=$(make -n B="$T/b" WITH_CUDA=no CH_DEPS_DONE=1 "$T/b/roofline" "$T/b/checkpoint_io" 2>&1); rc=$?
if [ $rc != 0 ]; then
	echo "not ok build keeps the mains' objects: make -n exit $rc: $(tail -2 <<<"$out")"
elif grep -qE "^rm [^-].*obj/bench/[a-z_]+\.o" <<<"$out"; then
	echo "not ok build keeps the mains' objects: $(grep -E "^rm [^-].*obj/bench/" <<<"$out" | head -2 | tr '\n' ' ')"
else
	echo "ok build keeps the mains' objects"
fi
exit 0
