#!/bin/bash
# cuda_preflight.sh - a GPU machine whose NVIDIA driver is older than the
# build's CUDA runtime (an R535-R570 driver, CUDA 12.x, under a CUDA 13
# build): every binary's "unavailable" reason names both versions and the
# fix. The driver is a stand-in (tests/fake-cudart, LD_PRELOAD): its
# cudaGetDeviceCount() fails with cudaErrorInsufficientDriver and its
# cudaDriverGetVersion() says CUDA 12.4. Without it (no driver at all) the
# reason says that no driver is loaded. gpu-check's own preflight is in
# tests/cli/gpu-check.sh.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
T=$(mktemp -d /tmp/ch_cuda_preflight.XXXXXX)
trap 'rm -rf "$T"' EXIT
FAKE=$B/tests/libfakecudart.so

for b in roofline allreduce_bw loader_contention; do
	[ -x "$B/$b" ] || { echo "skip cuda_preflight: $B/$b not built"; exit 0; }
done
if ! readelf -d "$B/roofline" | grep -q 'libcudart'; then
	echo "skip cuda_preflight: built without CUDA"
	exit 0
fi
[ -e "$FAKE" ] || { echo "not ok cuda_preflight: $FAKE not built (make test builds it)"; exit 0; }
rt=$(sed -n 's/^#define CUDART_VERSION \([0-9]*\)/\1/p' "${CUDA_HOME:-/usr/local/cuda}/include/cuda_runtime_api.h" | head -1)
want="the NVIDIA driver supports CUDA 12.4, this build's runtime is CUDA $((rt / 1000)).$((rt % 1000 / 10))"
fix="build with a CUDA 12.x toolkit .*forward-compatibility libcuda.so.1"

# one binary per GPU backend: compute (roofline), collectives (allreduce_bw,
# also in its single-process mode), copies (loader_contention)
run() { # NAME CMD...: exit 3, the versions and the fix in the output and in the result file
	local name=$1 rc
	shift
	LD_PRELOAD=$FAKE "$@" --json "$T/$name.json" >"$T/$name.out" 2>&1; rc=$?
	if [ $rc -eq 3 ] && grep -q "$want" "$T/$name.out" && grep -qE "$fix" "$T/$name.out" &&
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"] == "unavailable" and sys.argv[2] in d["reason"], d["reason"]' \
			"$T/$name.json" "$want"; then
		echo "ok cuda_preflight: $name names driver CUDA 12.4, the build's CUDA and the fix (exit 3)"
	else
		echo "not ok cuda_preflight: $name: exit $rc"; sed 's/^/    /' "$T/$name.out" | tail -5
	fi
}
run roofline "$B/roofline" --backend cuda
run allreduce_bw "$B/allreduce_bw" --backend nccl -b 8 -e 64
run allreduce_bw_g "$B/allreduce_bw" -g 2 -b 8 -e 64
run loader_contention "$B/loader_contention" --copy cuda --duration 0.2 --workers 1

# a CUDA 13 driver (13.0 or newer) is not reported as too old
FAKE_CUDA_DRIVER_VERSION=13000 LD_PRELOAD=$FAKE "$B/roofline" --backend cuda >"$T/new.out" 2>&1; rc=$?
if [ $rc -eq 3 ] && ! grep -q "this build's runtime" "$T/new.out"; then
	echo "ok cuda_preflight: a driver of the build's CUDA is not blamed"
else
	echo "not ok cuda_preflight: a driver of the build's CUDA: exit $rc"; tail -2 "$T/new.out" | sed 's/^/    /'
fi
# no driver at all (this machine)
"$B/roofline" --backend cuda >"$T/none.out" 2>&1; rc=$?
if [ $rc -eq 3 ] && grep -q "no NVIDIA driver is loaded" "$T/none.out"; then
	echo "ok cuda_preflight: without a driver the reason says so"
elif [ $rc -eq 3 ]; then
	echo "skip cuda_preflight: this machine has an NVIDIA driver ($(tail -1 "$T/none.out"))"
else
	echo "not ok cuda_preflight: without a driver: exit $rc"
fi
