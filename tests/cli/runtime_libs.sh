#!/bin/bash
# runtime_libs.sh - each binary needs at run time only the libraries it
# calls: roofline starts on a node without NCCL (libnccl.so.2), while
# allreduce_bw, which calls it, does not (the negative control that shows
# NCCL really was hidden). NCCL is hidden by running a copy of the binary
# whose RUNPATH string is overwritten in place (same length, a directory
# that does not exist) through ld.so without its cache, with a library
# folder holding only the CUDA runtime and cuBLASLt.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
T=$(mktemp -d /tmp/ch_runtime_libs.XXXXXX)
trap 'rm -rf "$T"' EXIT

for b in roofline allreduce_bw; do
	[ -x "$B/$b" ] || { echo "skip runtime_libs: $B/$b not built"; exit 0; }
done
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
if ! needed "$B/allreduce_bw" | grep -q '^libnccl'; then
	echo "skip runtime_libs: built without NCCL"
	exit 0
fi
LDSO=$(readelf -l "$B/roofline" | sed -n 's/.*interpreter: \(.*\)\]/\1/p')
RUNPATH=$(readelf -d "$B/roofline" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p;s/.*(RPATH).*\[\(.*\)\]/\1/p' | head -1)

# NEEDED: roofline names no NCCL, allreduce_bw does
if needed "$B/roofline" | grep -q '^libnccl'; then
	echo "not ok roofline_needs_no_nccl: $(needed "$B/roofline" | tr '\n' ' ')"
else
	echo "ok roofline_needs_no_nccl"
fi

# a copy of BIN whose RUNPATH points nowhere
strip_runpath() {
	python3 - "$1" "$2" "$RUNPATH" <<'EOF'
import sys
data = open(sys.argv[1], 'rb').read()
old = sys.argv[3].encode()
if old:
    i = data.find(old + b'\0')
    assert i >= 0, 'RUNPATH string not found'
    data = data[:i] + b'/nonexistent'.ljust(len(old), b'x')[:len(old)] + data[i + len(old):]
open(sys.argv[2], 'wb').write(data)
EOF
	chmod +x "$2"
}
mkdir -p "$T/lib"
for l in $(needed "$B/roofline" | grep -E '^lib(cudart|cublasLt|cublas)\.'); do
	p=$(ldd "$B/roofline" | awk -v n="$l" '$1 == n { print $3 }')
	[ -n "$p" ] && ln -s "$p" "$T/lib/$l"
done
strip_runpath "$B/roofline" "$T/roofline" && strip_runpath "$B/allreduce_bw" "$T/allreduce_bw" || {
	echo "not ok runtime_libs_setup: cannot copy the binaries"; exit 0; }
run() { "$LDSO" --inhibit-cache --library-path "$T/lib" "$@"; }

if run "$T/allreduce_bw" --help >"$T/ar.out" 2>&1; then
	echo "not ok runtime_libs_nccl_hidden: allreduce_bw started without libnccl.so.2 on its path"
elif grep -q 'libnccl.so.2' "$T/ar.out"; then
	echo "ok runtime_libs_nccl_hidden"
else
	echo "not ok runtime_libs_nccl_hidden: $(head -3 "$T/ar.out")"
fi
if run "$T/roofline" --backend cpu --kernels copy --size 1M --iters 2 -q --json "$T/rf.json" >"$T/rf.out" 2>&1 &&
	python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['status'] == 'ok'" "$T/rf.json"; then
	echo "ok roofline_starts_without_nccl"
else
	echo "not ok roofline_starts_without_nccl: $(head -5 "$T/rf.out")"
fi
