#!/bin/bash
# allreduce_gmode.sh - allreduce_bw -g N is the single-process path for
# every N >= 1 and never initialises MPI: an MPI_Init / MPI_Init_thread
# that exits 99 (an LD_PRELOAD shim built here) is never reached with -g 1
# or -g 2 (on this GPU-less machine the nccl backend is then unavailable,
# exit 3, with its result file), and is reached without -g (the MPI
# singleton path), which shows that the shim works.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
T=$(mktemp -d "${TMPDIR:-/tmp}/ch_allreduce_gmode.XXXXXX")
trap 'rm -rf "$T"' EXIT

[ -x "$B/allreduce_bw" ] || { echo "skip allreduce_gmode: $B/allreduce_bw not built"; exit 0; }
if ! readelf -d "$B/allreduce_bw" | grep -q 'libnccl'; then
	echo "skip allreduce_gmode: built without NCCL"
	exit 0
fi
cat >"$T/nompi.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static void mark(void)
{
	const char *f = getenv("CH_NOMPI_MARK");
	FILE *o = f ? fopen(f, "w") : NULL;
	if (o) {
		fputs("MPI_Init called\n", o);
		fclose(o);
	}
	_exit(99);
}
int MPI_Init(int *argc, char ***argv) { (void)argc; (void)argv; mark(); return 0; }
int MPI_Init_thread(int *argc, char ***argv, int r, int *p) { (void)argc; (void)argv; (void)r; (void)p; mark(); return 0; }
C
cc -shared -fPIC "$T/nompi.c" -o "$T/nompi.so" || { echo "skip allreduce_gmode: no C compiler"; exit 0; }

for g in 1 2; do
	rm -f "$T/mark"
	CH_NOMPI_MARK="$T/mark" LD_PRELOAD="$T/nompi.so" timeout 60 "$B/allreduce_bw" -g $g -b 8 -e 64 \
		--json "$T/g$g.json" >"$T/g$g.log" 2>&1
	rc=$?
	check "allreduce_bw -g $g: no MPI_Init (exit $rc)" bash -c '[ ! -e "$1" ] && [ "$2" = 3 ]' _ "$T/mark" "$rc"
	check "allreduce_bw -g $g: the result file says unavailable" \
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d.get("status") == "unavailable" else 1)' "$T/g$g.json"
done
rm -f "$T/mark"
CH_NOMPI_MARK="$T/mark" LD_PRELOAD="$T/nompi.so" timeout 60 "$B/allreduce_bw" -b 8 -e 64 >"$T/nog.log" 2>&1
check "allreduce_bw without -g initialises MPI (the shim works)" test -s "$T/mark"
rm -f "$T/mark"
CH_NOMPI_MARK="$T/mark" LD_PRELOAD="$T/nompi.so" timeout 60 "$B/allreduce_bw" -g 1 --backend mpi -b 8 -e 64 >"$T/mpi.log" 2>&1
rc=$?
check "allreduce_bw -g 1 --backend mpi: a usage error naming the nccl backend, no MPI_Init" \
	bash -c '[ "$1" = 2 ] && [ ! -e "$2" ] && grep -q -- "-g 1 needs the nccl backend" "$3"' _ "$rc" "$T/mark" "$T/mpi.log"
exit 0
