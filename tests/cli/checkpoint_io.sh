#!/bin/bash
# checkpoint_io.sh - checkpoint_io under mpirun (Open MPI, as root,
# oversubscribed) with small checkpoints: on 1, 2 and 4 ranks on a local
# directory and on a tmpfs, the bytes written equal the size asked for and
# every file reads back; on a slow target (tests/slowio.c, an LD_PRELOAD
# delay on fsync) staging blocks less than the synchronous write and a hung
# fsync is bounded by --timeout; a full tmpfs fails with exit 4 and a valid
# partial result; a corrupted shard is a FAIL (exit 1); a directory holding
# a foreign file is refused (exit 2); a signal finishes the result file.
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
# Run from the repository root (scripts/run-tests does).
set -u
cd "$(dirname "$0")/../.."
source scripts/test-env
BIN=${B:-build}/checkpoint_io
SLOWIO=$PWD/${B:-build}/tests/libslowio.so
T=$(mktemp -d /tmp/checkpoint_io-test.XXXXXX)
MNT=""
cleanup() {
	[ -n "$MNT" ] && umount "$MNT" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

if [ ! -x "$BIN" ]; then
	echo "not ok checkpoint_io: $BIN not built"
	exit 0
fi
# an ASan build must come first among the preloaded libraries; the shim is
# plain C and needs no checking
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"

# run NAME NP ARGS...: under mpirun with a 120 s bound, output in $T/NAME.out
run() {
	local name=$1 np=$2; shift 2
	timeout -k 10 120 $MPIRUN -np "$np" "$BIN" "$@" >"$T/$name.out" 2>&1
}

# jcheck NAME FILE ARGS PYTHON: run PYTHON with d = the JSON document, r =
# its results, a = the extra arguments; prints nothing when the checks pass.
jcheck() {
	local name=$1 file=$2 args=$3 code=$4 why
	why=$(python3 - "$file" $args <<EOF 2>&1
import json, os, sys
d = json.load(open(sys.argv[1]))
r = d.get("results", {})
a = sys.argv[2:]
$code
EOF
)
	if [ -z "$why" ]; then echo "ok $name"; else echo "not ok $name: $(echo "$why" | tail -3 | tr '\n' ' ')"; fi
}

# the checks of a good run: exact bytes, every file read back, files kept
GOOD='
size = int(a[0]); np = int(a[1]); nf = int(a[2]); kept = a[3]
assert d["status"] == "ok" and d["exit_code"] == 0, (d["status"], d.get("reason"))
assert r["config"]["size_bytes"] == size
for k in ("sync", "staged"):
    s = r[k]
    assert s["writers"] == np and s["files"] == np * nf, (k, s["writers"], s["files"])
    assert s["bytes"] == size, (k, s["bytes"], size)
    assert sum(p["bytes"] for p in s["per_rank"]) == size
    assert s["block_sec"] > 0 and s["block_sec"] == max(p["block_sec"] for p in s["per_rank"])
assert r["staged"]["copy_bytes"] == size
for k in ("sync", "staged"):
    v = r["verify"][k]
    assert v["files_checked"] == np * nf and v["files_bad"] == 0, (k, v)
pts = r["scaling"]["points"]
assert pts[-1]["writers"] == np and pts[-1]["bytes"] == size
assert [p["writers"] for p in pts] == {1: [1], 2: [1, 2], 4: [1, 2, 4]}[np], [p["writers"] for p in pts]
assert len(d["ranks"]["layout"]) == np
# the files on disk (--keep): the synchronous and the copied checkpoint
names = sorted(os.listdir(kept))
for kind in ("sync", "copy"):
    fs = [n for n in names if n.startswith("checkpoint_io.%s." % kind)]
    assert len(fs) == np * nf, (kind, len(fs))
    assert sum(os.path.getsize(os.path.join(kept, n)) for n in fs) == size, kind
assert not [n for n in names if ".stage." in n or ".w" in n], names
'

# ---- 1, 2, 4 ranks on a local directory (an odd size: the shards differ by a byte)
SIZE=3145735 # 3M + 7
for np in 1 2 4; do
	d="$T/local-$np"
	run "local-$np" $np --dir "$d" --stage-dir "$T/stage-$np" --size $SIZE --files-per-rank 2 \
		--block-size 64K --keep --json "$T/local-$np.json"
	rc=$?
	if [ $rc != 0 ]; then
		echo "not ok local dir, $np ranks: exit $rc: $(grep -m1 error "$T/local-$np.out")"
		continue
	fi
	jcheck "local dir, $np ranks: bytes exact, every file reads back" "$T/local-$np.json" "$SIZE $np 2 $d" "$GOOD"
	[ ! -e "$T/stage-$np" ] && echo "ok local dir, $np ranks: staging directory it created removed" ||
		echo "not ok local dir, $np ranks: staging left: $(ls -A "$T/stage-$np" | head -3)"
done

# without --keep, nothing is left, and a directory the run created is removed
mkdir -p "$T/clean-stage"
run clean 2 --dir "$T/clean" --stage-dir "$T/clean-stage" --size 1M --no-scaling
rc=$?
[ $rc = 0 ] && [ ! -e "$T/clean" ] && [ -d "$T/clean-stage" ] && [ -z "$(ls -A "$T/clean-stage")" ] && echo "ok no files left without --keep" ||
	echo "not ok no files left without --keep: exit $rc, $(ls -A "$T/clean" "$T/clean-stage" 2>&1 | head -3)"

# a world of one without a launcher, the default staging directory
timeout 60 "$BIN" --dir "$T/nolauncher" --size 1M --interval 30m >"$T/nolauncher.out" 2>&1
rc=$?
[ $rc = 0 ] && grep -q "stall fraction at --interval 30.00 min: synchronous" "$T/nolauncher.out" &&
	grep -q "not a shared mount" "$T/nolauncher.out" && echo "ok without a launcher: stall fraction printed" ||
	echo "not ok without a launcher: exit $rc: $(tail -3 "$T/nolauncher.out")"

# ---- tmpfs: 1, 2, 4 ranks, then a full one
if mkdir -p "$T/tmpfs" && mount -t tmpfs -o size=64m tmpfs "$T/tmpfs" 2>/dev/null; then
	MNT="$T/tmpfs"
	for np in 1 2 4; do
		d="$MNT/ckpt-$np"
		run "tmpfs-$np" $np --dir "$d" --stage-dir "$MNT/stage-$np" --size $SIZE --files-per-rank 2 --keep \
			--json "$T/tmpfs-$np.json"
		rc=$?
		if [ $rc != 0 ]; then
			echo "not ok tmpfs, $np ranks: exit $rc: $(grep -m1 error "$T/tmpfs-$np.out")"
			continue
		fi
		jcheck "tmpfs, $np ranks: bytes exact, every file reads back" "$T/tmpfs-$np.json" "$SIZE $np 2 $d" "$GOOD
assert d[\"ranks\"][\"layout\"][0][\"dir_mount\"][\"fstype\"] == \"tmpfs\", d[\"ranks\"][\"layout\"][0][\"dir_mount\"]"
		rm -rf "$d" "$MNT/stage-$np"
	done
	umount "$MNT"
	# a full target: 8 MiB holds the 6 MiB synchronous checkpoint, not the
	# scaling point or the staged copy written next to it. The check before
	# measuring asks for twice the checkpoint (12 MiB): refused, exit 2 (it
	# asked for once, passed, measured, then hit ENOSPC)
	if mount -t tmpfs -o size=8m tmpfs "$MNT" 2>/dev/null; then
		run twice 2 --dir "$MNT/ckpt" --stage-dir "$T/twice-stage" --size 6M --json "$T/twice.json"
		rc=$?
		[ $rc = 2 ] && grep -q "lacks space for the checkpoint: 12582912 bytes needed, [0-9]* available (twice the checkpoint: the synchronous one stays while the staged copy is written)" "$T/twice.out" &&
			[ -z "$(ls -A "$MNT")" ] && echo "ok room for one checkpoint, not two: refused before measuring, exit 2" ||
			echo "not ok room for one checkpoint, not two: exit $rc (want 2): $(grep -m1 error "$T/twice.out")"
		# a target that fills up during the run (another writer; here a
		# shim reports 100 MiB free): exit 4 and a valid partial result
		for np in 1 2; do
			CH_SLOWIO_PATH="$MNT/" CH_SLOWIO_AVAIL_BYTES=104857600 LD_PRELOAD="$SLOWIO" timeout -k 10 120 $MPIRUN -np $np \
				-x LD_PRELOAD -x CH_SLOWIO_PATH -x CH_SLOWIO_AVAIL_BYTES -x ASAN_OPTIONS "$BIN" --dir "$MNT/ckpt" \
				--stage-dir "$T/full-stage-$np" --size 6M --json "$T/full-$np.json" >"$T/full-$np.out" 2>&1
			rc=$?
			if [ $rc != 4 ]; then
				echo "not ok full target, $np ranks: exit $rc (want 4): $(grep -m1 error "$T/full-$np.out")"
			else
				jcheck "full target, $np ranks: exit 4, partial result" "$T/full-$np.json" "$np" '
np = int(a[0])
assert d["status"] == "error" and d["exit_code"] == 4, d["status"]
assert "No space left on device" in d["reason"], d["reason"]
assert r["sync"]["bytes"] == 6 << 20 and r["verify"]["sync"]["files_bad"] == 0
assert r["error"]["failures"][0]["error"] == "No space left on device"
'
				grep -q "No space left on device" "$T/full-$np.out" && grep -qE "rank [0-9]+ \(host '[^']+'\): write of '$MNT/ckpt/checkpoint_io" "$T/full-$np.out" &&
					echo "ok full target, $np ranks: message names rank, host and path" ||
					echo "not ok full target, $np ranks: message: $(grep -m2 error "$T/full-$np.out")"
			fi
			[ -z "$(ls -A "$MNT/ckpt" 2>/dev/null)" ] && echo "ok full target, $np ranks: files removed" ||
				echo "not ok full target, $np ranks: left $(ls -A "$MNT/ckpt" | head -3)"
		done
		# lacking room for one checkpoint: refused before writing
		run nospace 2 --dir "$MNT/ckpt2" --size 9M
		rc=$?
		[ $rc = 2 ] && grep -q "lacks space for the checkpoint: 18874368 bytes needed" "$T/nospace.out" &&
			echo "ok no room: refused, exit 2" || echo "not ok no room: exit $rc: $(grep -m1 error "$T/nospace.out")"
		umount "$MNT"
	else
		echo "skip full target: cannot mount a tmpfs"
	fi
	MNT=""
else
	echo "skip tmpfs: cannot mount a tmpfs here (needs root)"
fi

# ---- a slow target: fsync on it takes 400 ms (both the file's and the
# directory's); the slow part of the path is not in the result file's name
if [ -f "$SLOWIO" ]; then
	mkdir -p "$T/slowfs-1" "$T/slowfs-2" "$T/slowfs-4" "$T/slowfs-hung" "$T/slowfs-sig"
	for np in 1 2 4; do
		# mpirun passes the shim on with -x (before the binary)
		CH_SLOWIO_PATH="$T/slowfs-$np/" CH_SLOWIO_FSYNC_MS=400 LD_PRELOAD="$SLOWIO" timeout -k 10 120 $MPIRUN -np $np \
			-x LD_PRELOAD -x CH_SLOWIO_PATH -x CH_SLOWIO_FSYNC_MS -x ASAN_OPTIONS "$BIN" --dir "$T/slowfs-$np/ckpt" \
			--stage-dir "$T/slowstage-$np" --size 2M --no-scaling --load cpu --interval 10s --json "$T/slow-$np.json" \
			>"$T/slow-$np.out" 2>&1
		rc=$?
		if [ $rc != 0 ]; then
			echo "not ok slow target, $np ranks: exit $rc: $(grep -m1 error "$T/slow-$np.out")"
			continue
		fi
		jcheck "slow target, $np ranks: staged blocks less than synchronous" "$T/slow-$np.json" "" '
sb = r["sync"]["block_sec"]; tb = r["staged"]["block_sec"]
assert sb >= 0.8, "synchronous block %g s, below the two injected 0.4 s fsyncs" % sb
assert tb < sb, "staged %g s not below synchronous %g s" % (tb, sb)
assert r["staged"]["copy_sec"] >= 0.8, r["staged"]["copy_sec"]
st = r["stall"]
assert abs(st["sync_frac"] - sb / 10) < 1e-12 and abs(st["staged_frac"] - tb / 10) < 1e-12
assert abs(st["recovered_frac"] - (sb - tb) / 10) < 1e-12
assert r["staged"]["load"]["kind"] == "cpu" and r["staged"]["load"]["cpu_slowdown_frac"]["n"] == int(d["ranks"]["world_size"])
'
	done
	# --repeat 3: the synchronous checkpoint written three times, each a
	# fresh measurement (the files are created with O_EXCL: the previous
	# ones were removed; each write pays its own two 0.4 s fsyncs): the
	# first stays results.sync's figures, the others are results.sync.again
	mkdir -p "$T/slowfs-rep"
	CH_SLOWIO_PATH="$T/slowfs-rep/" CH_SLOWIO_FSYNC_MS=400 LD_PRELOAD="$SLOWIO" timeout -k 10 120 $MPIRUN -np 2 \
		-x LD_PRELOAD -x CH_SLOWIO_PATH -x CH_SLOWIO_FSYNC_MS -x ASAN_OPTIONS "$BIN" --dir "$T/slowfs-rep/ckpt" \
		--stage-dir "$T/repstage" --size $SIZE --files-per-rank 2 --no-scaling --load none --repeat 3 --keep \
		--json "$T/rep.json" >"$T/rep.out" 2>&1
	rc=$?
	[ $rc = 0 ] && grep -q "^    write 3 " "$T/rep.out" || echo "not ok --repeat 3: exit $rc: $(grep -m1 error "$T/rep.out")"
	jcheck "--repeat 3: the synchronous checkpoint written three times, each recorded" "$T/rep.json" "$SIZE $T/slowfs-rep/ckpt" '
size = int(a[0]); kept = a[1]
assert d["status"] == "ok" and r["config"]["repeat"] == 3, (d["status"], r["config"].get("repeat"))
s = r["sync"]
assert s["bytes"] == size and len(s["per_rank"]) == 2 and s["block_sec"] >= 0.8, s["block_sec"]
ag = s["again"]
assert [x["write"] for x in ag] == [2, 3], [x.get("write") for x in ag]
for x in ag:
    assert x["bytes"] == size and sum(p["bytes"] for p in x["per_rank"]) == size, x["bytes"]
    assert sorted(p["rank"] for p in x["per_rank"]) == [0, 1]
    assert x["block_sec"] >= 0.8, "write %d blocked %g s, below its own two 0.4 s fsyncs" % (x["write"], x["block_sec"])
    assert x["block_sec"] == max(p["block_sec"] for p in x["per_rank"])
    for p in x["per_rank"]:
        assert abs(p["write_gbps"] - p["bytes"] / p["block_sec"] / 1e9) < 1e-9 * p["write_gbps"], p
    assert abs(x["agg_write_gbps"] - size / x["block_sec"] / 1e9) < 1e-9 * x["agg_write_gbps"]
assert len({s["block_sec"]} | {x["block_sec"] for x in ag}) == 3, "three writes, the same block time"
assert r["verify"]["sync"]["files_checked"] == 4 and r["verify"]["sync"]["files_bad"] == 0
fs = [n for n in os.listdir(kept) if n.startswith("checkpoint_io.sync.")]
assert len(fs) == 4 and sum(os.path.getsize(os.path.join(kept, n)) for n in fs) == size, fs
'
	# the default: written once, no "again"
	jcheck "--repeat: written once without it (no results.sync.again)" "$T/slow-2.json" "" '
assert "again" not in r["sync"] and r["config"]["repeat"] == 1, r["sync"].keys()
'
	# a hung fsync (30 s) against --timeout 2: exit 4 naming the rank and the path
	t0=$(date +%s)
	CH_SLOWIO_PATH="$T/slowfs-hung/" CH_SLOWIO_FSYNC_MS=30000 LD_PRELOAD="$SLOWIO" timeout -k 10 120 $MPIRUN -np 2 \
		-x LD_PRELOAD -x CH_SLOWIO_PATH -x CH_SLOWIO_FSYNC_MS -x ASAN_OPTIONS "$BIN" --dir "$T/slowfs-hung/ckpt" \
		--stage-dir "$T/hungstage" --size 1M --timeout 2 --json "$T/hung.json" >"$T/hung.out" 2>&1
	rc=$?
	el=$(( $(date +%s) - t0 ))
	if [ $rc = 4 ] && grep -qE "timeout: rank [01] \(host '[^']+'\) spent more than 2 s in writing and fsyncing '$T/slowfs-hung/ckpt/checkpoint_io.sync.r0000[01].f000'" "$T/hung.out"; then
		echo "ok hung fsync: exit 4 after --timeout, rank and path named (${el} s)"
	else
		echo "not ok hung fsync: exit $rc after ${el} s: $(grep -m1 timeout "$T/hung.out")"
	fi
	jcheck "hung fsync: result finished with status error" "$T/hung.json" "" '
assert d["status"] == "error" and "timeout" in d["reason"], d["status"]
assert r["timeout"]["timeout_sec"] == 2
'
	# the timeout removes what the run wrote and the directories it made
	# (each rank before it exits, so before mpirun returns)
	left=$(find "$T/slowfs-hung" "$T/hungstage" -name 'checkpoint_io.*' 2>/dev/null | head -3)
	if [ -z "$left" ] && [ ! -e "$T/hungstage" ] && [ ! -e "$T/slowfs-hung/ckpt" ]; then
		echo "ok hung fsync: the timeout removed the run's files and directories"
	else
		echo "not ok hung fsync: left behind after the timeout: ${left:-a directory} $(ls -d "$T/hungstage" "$T/slowfs-hung/ckpt" 2>/dev/null)"
	fi
	# a signal: SIGTERM to the ranks while the fsync is slow
	CH_SLOWIO_PATH="$T/slowfs-sig/" CH_SLOWIO_FSYNC_MS=20000 LD_PRELOAD="$SLOWIO" timeout -k 10 120 $MPIRUN -np 2 \
		-x LD_PRELOAD -x CH_SLOWIO_PATH -x CH_SLOWIO_FSYNC_MS -x ASAN_OPTIONS "$BIN" --dir "$T/slowfs-sig/ckpt" \
		--stage-dir "$T/sigstage" --size 1M --json "$T/sig.json" >"$T/sig.out" 2>&1 &
	pid=$!
	# signal once both ranks are inside the synchronous write (their files
	# exist; each fsync then takes 20 s), not while they are still starting
	for i in $(seq 1 600); do
		[ -e "$T/slowfs-sig/ckpt/checkpoint_io.sync.r00000.f000" ] &&
			[ -e "$T/slowfs-sig/ckpt/checkpoint_io.sync.r00001.f000" ] && break
		sleep 0.1
	done
	sleep 0.5
	# SIGTERM to every rank, as Slurm's scancel and a job's time limit do
	# (Open MPI's mpirun, signalled itself, may kill its ranks at once)
	pkill -TERM -f "^$BIN --dir $T/slowfs-sig/ckpt"
	wait $pid
	rc=$?
	[ $rc != 0 ] && grep -q "interrupted by signal 15" "$T/sig.out" && echo "ok signal: run stopped, exit $rc" ||
		echo "not ok signal: exit $rc: $(tail -2 "$T/sig.out")"
	jcheck "signal: result finished with status error and the phase" "$T/sig.json" "" '
assert d["status"] == "error" and "interrupted by signal 15" in d["reason"] and "synchronous checkpoint" in d["reason"], d.get("reason")
assert r["config"]["size_bytes"] == 1 << 20
'
	# the directories the run created go with its files
	[ ! -e "$T/slowfs-sig/ckpt" ] && [ ! -e "$T/sigstage" ] && echo "ok signal: the directories it created removed" ||
		echo "not ok signal: left $(ls -d "$T/slowfs-sig/ckpt" "$T/sigstage" 2>/dev/null | tr '\n' ' ')"
	# two runs into one --dir at once: the second is refused by the first's
	# lock file (it deleted the first's files as "left by an interrupted
	# run"), the first finishes untouched
	mkdir -p "$T/slowfs-two"
	CH_SLOWIO_PATH="$T/slowfs-two/" CH_SLOWIO_FSYNC_MS=1500 LD_PRELOAD="$SLOWIO" timeout -k 10 120 $MPIRUN -np 2 \
		-x LD_PRELOAD -x CH_SLOWIO_PATH -x CH_SLOWIO_FSYNC_MS -x ASAN_OPTIONS "$BIN" --dir "$T/slowfs-two/ckpt" \
		--stage-dir "$T/twostage-a" --size 1M --no-scaling --json "$T/two-a.json" >"$T/two-a.out" 2>&1 &
	pid=$!
	for i in $(seq 1 600); do
		[ -e "$T/slowfs-two/ckpt/checkpoint_io.lock" ] && [ -e "$T/slowfs-two/ckpt/checkpoint_io.sync.r00000.f000" ] && break
		sleep 0.1
	done
	run two-b 2 --dir "$T/slowfs-two/ckpt" --stage-dir "$T/twostage-b" --size 1M --no-scaling --json "$T/two-b.json"
	rb=$?
	wait $pid
	ra=$?
	[ $rb = 2 ] && grep -q "is in use by another checkpoint_io run (its rank 0: host '[^']*', pid [0-9]*; lock file '$T/slowfs-two/ckpt/checkpoint_io.lock')" "$T/two-b.out" &&
		[ $ra = 0 ] && [ ! -e "$T/slowfs-two/ckpt" ] &&
		echo "ok two runs into one --dir: the second refused (exit 2), the first intact" ||
		echo "not ok two runs into one --dir: exits $ra, $rb (want 0, 2): $(grep -m1 error "$T/two-b.out" "$T/two-a.out")"
	jcheck "two runs into one --dir: the first run's result ok" "$T/two-a.json" "" '
assert d["status"] == "ok" and r["verify"]["sync"]["files_bad"] == 0 and r["verify"]["staged"]["files_bad"] == 0, d["reason"]
'
	# SIGTERM to one rank that is not rank 0: the result names the signal
	# and the rank (it was recorded as another rank's read-back I/O error)
	mkdir -p "$T/slowfs-one"
	CH_SLOWIO_PATH="$T/slowfs-one/" CH_SLOWIO_FSYNC_MS=3000 LD_PRELOAD="$SLOWIO" timeout -k 10 120 $MPIRUN -np 3 \
		-x LD_PRELOAD -x CH_SLOWIO_PATH -x CH_SLOWIO_FSYNC_MS -x ASAN_OPTIONS "$BIN" --dir "$T/slowfs-one/ckpt" \
		--stage-dir "$T/onestage" --size 1M --no-scaling --json "$T/one.json" >"$T/one.out" 2>&1 &
	pid=$!
	for i in $(seq 1 600); do
		[ -e "$T/slowfs-one/ckpt/checkpoint_io.sync.r00002.f000" ] && break
		sleep 0.1
	done
	for q in $(pgrep -f -- "--json $T/one.json"); do
		[ "$(tr '\0' '\n' </proc/$q/environ 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')" = 2 ] && kill -TERM $q
	done
	wait $pid
	rc=$?
	[ $rc = 4 ] && echo "ok signal to one rank: exit 4" || echo "not ok signal to one rank: exit $rc (want 4): $(grep -m1 error "$T/one.out")"
	jcheck "signal to one rank: the result names the rank and the signal" "$T/one.json" "" '
assert d["status"] == "error" and d["exit_code"] == 4, d["status"]
assert d["reason"].startswith("rank 2 (host ") and "interrupted by signal 15" in d["reason"] and "synchronous checkpoint" in d["reason"], d["reason"]
'
else
	echo "not ok slow target: $SLOWIO not built (make test builds it)"
fi

# ---- a corrupted shard: FAIL, exit 1, the file named
run corrupt 4 --dir "$T/corrupt" --size 4M --test-corrupt-rank 2 --no-scaling --json "$T/corrupt.json"
rc=$?
[ $rc = 1 ] && grep -q "rank 2: '$T/corrupt/checkpoint_io.sync.r00002.f000' does not read back as written (crc32 check failed)" "$T/corrupt.out" &&
	echo "ok corrupted shard: exit 1, file named" || echo "not ok corrupted shard: exit $rc: $(grep -m1 error "$T/corrupt.out")"
jcheck "corrupted shard: result failed, one bad file" "$T/corrupt.json" "" '
assert d["status"] == "failed" and d["exit_code"] == 1, d["status"]
v = r["verify"]
assert v["sync"]["files_bad"] == 1 and v["sync"]["bad"][0]["rank"] == 2 and v["sync"]["bad"][0]["op"] == "crc32 check"
assert v["staged"]["files_bad"] == 0
'

# ---- refusals
mkdir -p "$T/busy" && echo keep >"$T/busy/model.pt"
run busy 2 --dir "$T/busy" --size 1M
rc=$?
[ $rc = 2 ] && grep -q "is not empty: it holds 'model.pt'" "$T/busy.out" && [ -f "$T/busy/model.pt" ] &&
	echo "ok foreign file in --dir: refused, exit 2, left alone" || echo "not ok foreign file in --dir: exit $rc"
mkdir -p "$T/own" && : >"$T/own/checkpoint_io.sync.r00000.f000"
run own 2 --dir "$T/own" --size 1M --no-scaling
rc=$?
[ $rc = 0 ] && [ -z "$(ls -A "$T/own")" ] && echo "ok own leftovers in --dir: accepted and removed" ||
	echo "not ok own leftovers in --dir: exit $rc, $(ls -A "$T/own")"
run badrank 2 --dir "$T/badrank" --size 1M --test-corrupt-rank 5
rc=$?
[ $rc = 2 ] && grep -q "is not a rank of this run" "$T/badrank.out" && echo "ok --test-corrupt-rank beyond the world: exit 2" ||
	echo "not ok --test-corrupt-rank beyond the world: exit $rc"
run tiny 4 --dir "$T/tiny" --size 7 --files-per-rank 2
rc=$?
[ $rc = 2 ] && grep -q "cannot give each of 4 ranks 2 files" "$T/tiny.out" && echo "ok size below one byte per file: exit 2" ||
	echo "not ok size below one byte per file: exit $rc"
# a read-only --dir (an existing, empty directory on a read-only mount,
# which root too cannot write into): refused by name, exit 2
if mkdir -p "$T/ro" && mount -t tmpfs -o ro,size=1m tmpfs "$T/ro" 2>/dev/null; then
	MNT="$T/ro"
	run ro 2 --dir "$T/ro" --size 1M
	rc=$?
	[ $rc = 2 ] && grep -q "cannot write into --dir '$T/ro': Read-only file system" "$T/ro.out" &&
		echo "ok read-only --dir: refused by name, exit 2" || echo "not ok read-only --dir: exit $rc: $(grep -m1 error "$T/ro.out")"
	run rostage 2 --dir "$T/rostage-dir" --stage-dir "$T/ro" --size 1M
	rc=$?
	[ $rc = 2 ] && grep -q "cannot write into --stage-dir '$T/ro'" "$T/rostage.out" &&
		echo "ok read-only --stage-dir: refused by name, exit 2" ||
		echo "not ok read-only --stage-dir: exit $rc: $(grep -m1 error "$T/rostage.out")"
	umount "$T/ro"
	MNT=""
	# shards that need more host memory than the node has: a tmpfs twice
	# the memory's size has room (tmpfs allocates only what is written),
	# the buffers and the staged copy on it would not fit: refused, exit 2
	mem=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 1024 ))
	if mkdir -p "$T/big" && mount -t tmpfs -o size=$((mem * 2)) tmpfs "$T/big" 2>/dev/null; then
		MNT="$T/big"
		run bigmem 2 --dir "$T/big/ckpt" --stage-dir "$T/big/stage" --size $((mem / 4 * 3))
		rc=$?
		[ $rc = 2 ] && grep -q "would hold [0-9]* bytes in host memory (their shards, and again in the memory-backed --stage-dir), more than its" "$T/bigmem.out" &&
			[ -z "$(ls -A "$T/big")" ] && echo "ok shards beyond host memory: refused before writing, exit 2" ||
			echo "not ok shards beyond host memory: exit $rc: $(grep -m1 error "$T/bigmem.out"), left $(ls -A "$T/big")"
		umount "$T/big"
		MNT=""
	else
		echo "skip shards beyond host memory: cannot mount a tmpfs"
	fi
else
	echo "skip read-only --dir: cannot mount a tmpfs (needs root)"
fi
exit 0
