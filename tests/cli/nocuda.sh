#!/bin/bash
# nocuda.sh - the build without CUDA and NCCL (WITH_CUDA=no WITH_NCCL=no),
# as on a machine without the toolkit: it compiles and links in a build
# folder of its own, and each binary that was asked for a GPU backend says
# it is not built in and exits 3 (unavailable), while its CPU path runs.
# Skipped when the tree under test is itself built WITH_CUDA=no (the other
# tests then cover this build).
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
if [ "${WITH_CUDA:-auto}" = no ]; then
	echo "skip nocuda_build: the tests already run a WITH_CUDA=no build"
	exit 0
fi
NB=$(mktemp -d /tmp/ch_nocuda.XXXXXX)
trap 'rm -rf "$NB"' EXIT

if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -j2 CH_DEPS_DONE=1 B="$NB" SANITIZE="${SANITIZE:-}" \
	WITH_CUDA=no WITH_NCCL=no all >"$NB/make.log" 2>&1; then
	echo "not ok nocuda_build: make WITH_CUDA=no WITH_NCCL=no failed"
	grep -E 'error|Error' "$NB/make.log" | head -5 | sed 's/^/    /'
	exit 0
fi
echo "ok nocuda_build"

# expect NAME RC PATTERN CMD...: CMD exits RC and its output has PATTERN
expect() {
	local n=$1 want=$2 pat=$3 out rc
	shift 3
	out=$("$@" 2>&1); rc=$?
	if [ "$rc" = "$want" ] && grep -qF -- "$pat" <<<"$out"; then
		echo "ok $n"
	else
		echo "not ok $n: exit $rc (want $want), output: $(tail -2 <<<"$out" | tr '\n' ' ')"
	fi
}
expect nocuda_roofline_cuda_unavailable 3 "CUDA backend not built in" \
	"$NB/roofline" --backend cuda --json "$NB/r.json"
expect nocuda_allreduce_nccl_unavailable 3 "the nccl backend is not built into this binary" \
	"$NB/allreduce_bw" --backend nccl --json "$NB/a.json"
expect nocuda_roofline_cpu_runs 0 "memory roof" \
	"$NB/roofline" --backend cpu --kernels triad,fma16 --size 1M --iters 2 --warmup 1 --json "$NB/rc.json"
exit 0
