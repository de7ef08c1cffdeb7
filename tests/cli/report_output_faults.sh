#!/bin/bash
# report_output_faults.sh - health_report's outputs when writing them fails
# or is cut short, on a make-fleet fleet of 40 nodes (outputs of 1.8 MB):
#   - a full --out file system: exit 4 naming the file and the cause, what
#     was written whole, nothing else left;
#   - a full or missing $TMPDIR (health.prom's samples are spilled there):
#     exit 4 naming that directory, not an output, the outputs unchanged;
#   - another health_report writing to the same --out (its lock held):
#     exit 4 saying so, nothing written, never a mixed set;
#   - SIGTERM while the outputs are written on a file system without
#     O_TMPFILE (NFS; the atomic writer's named temporary): the outputs
#     unchanged and no temporary left beside them.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_report_faults.XXXXXX)
MNTS=()
cleanup() {
	local m
	for m in "${MNTS[@]}"; do umount "$m" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

if [ ! -x "$HR" ]; then
	echo "skip report_output_faults: $HR is not built"
	exit 0
fi
scripts/bench/make-fleet 40 "$TMP/fleet" >/dev/null || { echo "not ok report_output_faults: make-fleet failed"; exit 0; }

# same NAME DIR REF: DIR holds REF's four outputs byte for byte and nothing else
same() {
	local f extra
	for f in profile.json report.md health.prom report.html; do
		cmp -s "$2/$f" "$3/$f" || { echo "not ok $1: $2/$f changed or missing"; return 1; }
	done
	extra=$(ls -A "$2" | grep -vxE 'profile.json|report.md|health.prom|report.html|filler|\.health_report\.lock')
	[ -z "$extra" ] || { echo "not ok $1: left in $2: $extra"; return 1; }
	return 0
}

"$HR" -q --out "$TMP/ref" "$TMP/fleet" >/dev/null 2>&1

# ---- a full --out file system: room for profile.json (0.9 MB), not for the
# rest (0.9 MB more): the error names the file and says why (it said "out
# of memory"); what is there is whole, no temporary left
M=$TMP/full
if mkdir -p "$M" && mount -t tmpfs -o size=1536k tmpfs "$M" 2>/dev/null; then
	MNTS+=("$M")
	out=$("$HR" -q --out "$M/out" "$TMP/fleet" 2>&1); rc=$?
	left=$(ls -A "$M/out" | grep -vxE 'profile.json|report.md|health.prom|report.html|\.health_report\.lock')
	if [ $rc != 4 ] || ! grep -qE "cannot write '$M/out/(profile.json|report.md|health.prom|report.html)': No space left on device" <<<"$out" ||
	   grep -q "out of memory" <<<"$out"; then
		echo "not ok report_full_out_dir: exit $rc (want 4): $out"
	elif [ -n "$left" ]; then
		echo "not ok report_full_out_dir: left in $M/out: $left"
	else
		bad=""
		for f in profile.json report.md health.prom report.html; do
			[ -e "$M/out/$f" ] && ! cmp -s "$M/out/$f" "$TMP/ref/$f" &&
				! { [ $f = profile.json ] && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$M/out/$f"; } && bad+=" $f"
		done
		[ -z "$bad" ] && echo "ok report_full_out_dir" || echo "not ok report_full_out_dir: not whole:$bad"
	fi
else
	echo "skip report_full_out_dir: cannot mount a tmpfs here (needs root)"
fi

# ---- a full $TMPDIR, and one that does not exist
T=$TMP/tmpdir
if mkdir -p "$T" && mount -t tmpfs -o size=64k tmpfs "$T" 2>/dev/null; then
	MNTS+=("$T")
	cp -r "$TMP/ref" "$TMP/out2"
	out=$(TMPDIR=$T "$HR" -q --out "$TMP/out2" "$TMP/fleet" 2>&1); rc=$?
	if [ $rc != 4 ] || ! grep -qF "a temporary file in '$T'" <<<"$out" || ! grep -qF "No space left on device" <<<"$out" ||
	   grep -qE "cannot write '$TMP/out2|out of memory" <<<"$out"; then
		echo "not ok report_tmpdir_full: exit $rc (want 4): $out"
	elif [ -n "$(ls -A "$T")" ]; then
		echo "not ok report_tmpdir_full: left in \$TMPDIR: $(ls -A "$T")"
	else
		same report_tmpdir_full "$TMP/out2" "$TMP/ref" && echo "ok report_tmpdir_full"
	fi
else
	echo "skip report_tmpdir_full: cannot mount a tmpfs here (needs root)"
fi
cp -r "$TMP/ref" "$TMP/out3"
out=$(TMPDIR=$TMP/no/such/dir "$HR" -q --out "$TMP/out3" "$TMP/fleet" 2>&1); rc=$?
if [ $rc = 4 ] && grep -qF "a temporary file in '$TMP/no/such/dir'" <<<"$out" && grep -qF "No such file or directory" <<<"$out"; then
	same report_tmpdir_missing "$TMP/out3" "$TMP/ref" && echo "ok report_tmpdir_missing"
else
	echo "not ok report_tmpdir_missing: exit $rc (want 4): $out"
fi

# ---- SIGTERM while the outputs are written, without O_TMPFILE
SLOWIO=$B/tests/libslowio.so
if [ ! -f "$SLOWIO" ]; then
	echo "skip report_signal_leaves_no_temporary: $SLOWIO is not built (make test builds it)"
else
	cp -r "$TMP/ref" "$TMP/sig"
	LD_PRELOAD=$SLOWIO CH_SLOWIO_PATH=$TMP/sig CH_SLOWIO_NO_TMPFILE=1 CH_SLOWIO_WRITE_MS=5 \
		"$HR" -q --out "$TMP/sig" "$TMP/fleet" >"$TMP/sig.txt" 2>&1 &
	pid=$!
	for _ in $(seq 1 1500); do
		compgen -G "$TMP/sig/*.tmp.$pid" >/dev/null && break
		sleep 0.02
	done
	seen=$(compgen -G "$TMP/sig/*.tmp.$pid")
	kill -TERM $pid 2>/dev/null
	wait $pid; rc=$?
	if [ -z "$seen" ]; then
		echo "not ok report_signal_leaves_no_temporary: no temporary was ever seen (exit $rc)"
	elif [ $rc != 143 ]; then
		echo "not ok report_signal_leaves_no_temporary: exit $rc (want 143, ended by SIGTERM): $(cat "$TMP/sig.txt")"
	else
		same report_signal_leaves_no_temporary "$TMP/sig" "$TMP/ref" && echo "ok report_signal_leaves_no_temporary"
	fi
fi

# ---- two runs, one --out: the second is refused while the first holds the
# directory's lock (here the test holds it), nothing of it is written
mkdir -p "$TMP/locked"
exec 8>"$TMP/locked/.health_report.lock"
flock 8
out=$("$HR" -q --out "$TMP/locked" "$TMP/fleet" 8>&- 2>&1); rc=$?
exec 8>&-
if [ $rc = 4 ] && [ -z "$(ls -A "$TMP/locked" | grep -vx '\.health_report\.lock')" ] &&
	grep -qF "the output directory '$TMP/locked' is being written by another health_report" <<<"$out"; then
	"$HR" -q --out "$TMP/locked" "$TMP/fleet" >/dev/null 2>&1; rc=$?
	# once let go, the next run writes the whole set
	[ $rc -le 1 ] && [ -s "$TMP/locked/report.md" ] && [ -s "$TMP/locked/report.html" ] && [ -s "$TMP/locked/health.prom" ] &&
		python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$TMP/locked/profile.json" &&
		echo "ok report_out_locked_refused" || echo "not ok report_out_locked_refused: exit $rc once the lock was let go"
else
	echo "not ok report_out_locked_refused: exit $rc (want 4), left $(ls -A "$TMP/locked" | paste -sd' '): $out"
fi
