#!/bin/bash
# history_detection.sh - the history's change detector through the binary
# (report/history/hr_detect.h, docs/workflows.md "Change detection"), on
# fleets drawn by tests/data/report/make-nights.py: 2 nodes of 8 H100 and a
# CPU socket, 1% night-to-night noise, 12 nights, n001's gpu0 bf16 roof and
# n002's CPU socket memory roof 10% lower from night 9 (2026-12-09): both
# REGRESSED by the detector within 3 nights, dated 2026-12-09, nothing else
# flagged; a 20% drop of a GPU roof measured twice WARN on its first night,
# and so is a 30% drop of a CPU socket (roofline measures its roof points
# twice), which measured once (an older roofline) is only info; one t3 tail
# night of a GPU roof among 8 healthy nodes only info; the same fleet
# healthy with heavy-tailed (t3) noise at 3%: no series REGRESSED on any
# night; with each GPU's UUID recorded, a GPU
# swapped at the same index starts its own series, and a database written
# before the identity columns gets them. Fixed seeds: regression tests; the rates
# are asserted by the unit tests detect/* and measured by
# scripts/measure-detection.
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_hist_detect.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    /' "$3" | tail -30; }
if [ ! -x "$HR" ]; then
	echo "skip history_detection: $HR is not built"
	exit 0
fi

# nights 1..12 into a history; the output of night N in $TMP/$1.N, its exit in $TMP/$1.N.rc
run_nights() {
	local name=$1 k=0 d
	shift
	python3 tests/data/report/make-nights.py "$TMP/$name" --nodes 2 --nights 12 "$@" || return 1
	[ -z "${HOOK:-}" ] || $HOOK "$TMP/$name" || return 1
	for d in "$TMP/$name"/2026-12-*; do
		k=$((k + 1))
		"$HR" history --db "$TMP/$name.sqlite" --night "${d##*/}" --json "$TMP/$name.$k.json" "$d" \
			>"$TMP/$name.$k" 2>&1
		echo $? >"$TMP/$name.$k.rc"
	done
}

run_nights drop --sigma 0.01 --seed 3 --fault gpu_compute:0.1:8:1:0 --fault cpu_socket:0.1:8:2
first=""
for k in $(seq 1 12); do
	if grep -q '^REGRESSED' "$TMP/drop.$k"; then first=$k; break; fi
done
if [ -n "$first" ] && [ "$first" -ge 9 ] && [ "$first" -le 11 ] &&
	[ "$(cat "$TMP/drop.12.rc")" = 1 ] &&
	grep -q '^REGRESSED n001 gpu0 roofline.compute_gflops.bf16: regressed [0-9.]*% since 2026-12-09, 4 nights; CUSUM [0-9.]* over [0-9.]* (' "$TMP/drop.12" &&
	grep -q '^REGRESSED n002 cpu roofline.memory_gbps: regressed [0-9.]*% since 2026-12-09, 4 nights; CUSUM ' "$TMP/drop.12" &&
	[ "$(grep -c '^REGRESSED' "$TMP/drop.12")" = 2 ] &&
	grep -qx 'drain candidates: n001 n002' "$TMP/drop.12" &&
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
r = j["regressions"]
assert len(r) == 2 and all(x["rule"] == "cusum" and x["level"] == "regressed" and x["since"] == "2026-12-09"
                           and x["nights"] == 4 and 8 < x["pct"] < 12 and x["cusum"] > x["cusum_threshold"] > 0
                           and 0 < x["noise_pct"] < 3 for x in r), r
assert j["drain_candidates"] == ["n001", "n002"] and j["cusum_false_alarm_per_node"] == 0.0005
' "$TMP/drop.12.json"; then
	ok history_detection_lasting_drop
else
	nok history_detection_lasting_drop "first REGRESSED on night '${first:-none}' (want 9-11, the drop from night 9)" "$TMP/drop.12"
fi

# ---- series keyed by the GPU's UUID, not its index alone: the same drop
# with host.inventory naming each GPU's UUID is REGRESSED as before; when
# n001's GPU 0 is another GPU from night 9 (a swap: a new UUID at the same
# index, 10% slower silicon), its series starts again (too few nights to
# judge), nothing REGRESSED for it
with_uuids() { # NAME SWAP(0|1): $TMP/NAME's roofline files get UUIDs
	python3 - "$TMP/$1" "$2" <<'PY'
import glob, json, os, sys
root, swap = sys.argv[1], sys.argv[2] == "1"
for k, night in enumerate(sorted(glob.glob(os.path.join(root, "2026-12-*")))):
    for path in glob.glob(os.path.join(night, "*", "roofline.json")):
        d = json.load(open(path))
        node = d["host"]["hostname"]
        gpus = [x for x in d["results"]["devices"] if x["kind"] == "gpu"]
        d["host"]["inventory"]["gpus"] = [
            {"index": int(x["device"][3:]), "pci_bus_id": "0000" + x["pci_bus_id"].upper(),
             "uuid": "GPU-%s-%s%s" % (node, x["device"], "-new" if swap and node == "n001" and x["device"] == "gpu0"
                                      and k >= 8 else "")} for x in gpus]
        json.dump(d, open(path, "w"))
PY
}
run_ids() { # NAME SWAP
	local k=0 d
	python3 tests/data/report/make-nights.py "$TMP/$1" --nodes 2 --nights 12 --sigma 0.01 --seed 3 \
		--fault gpu_compute:0.1:8:1:0 --fault cpu_socket:0.1:8:2 || return 1
	with_uuids "$1" "$2"
	for d in "$TMP/$1"/2026-12-*; do
		k=$((k + 1))
		"$HR" history --db "$TMP/$1.sqlite" --night "${d##*/}" --json "$TMP/$1.$k.json" "$d" >"$TMP/$1.$k" 2>&1
	done
}
run_ids ids 0
run_ids swap 1
if grep -q '^REGRESSED n001 gpu0 roofline.compute_gflops.bf16: regressed [0-9.]*% since 2026-12-09' "$TMP/ids.12" &&
	grep -q '^REGRESSED n002 cpu roofline.memory_gbps' "$TMP/ids.12" &&
	! grep -q '^REGRESSED n001 gpu0' "$TMP/swap.12" && grep -q '^REGRESSED n002 cpu roofline.memory_gbps' "$TMP/swap.12" &&
	python3 - "$TMP/swap.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
ids = {r[0] for r in db.execute("SELECT device_id FROM metrics WHERE node = 'n001' AND gpu = 'gpu0'")}
models = {r[0] for r in db.execute("SELECT model FROM metrics WHERE gpu = 'gpu1'")}
assert ids == {"GPU-n001-gpu0", "GPU-n001-gpu0-new"} and models == {"H100 SXM"}, (ids, models)
PY
then
	ok history_detection_series_by_uuid
else
	nok history_detection_series_by_uuid "with UUIDs: $(grep -c '^REGRESSED' "$TMP/ids.12") REGRESSED; swapped: $(grep '^REGRESSED' "$TMP/swap.12" | cut -c1-60 | tr '\n' ';')" "$TMP/swap.12"
fi

# a history written before the identity columns: they are added, the old
# nights kept (NULL identity: part of every series)
cp "$TMP/ids.sqlite" "$TMP/old.sqlite"
python3 - "$TMP/old.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("""CREATE TABLE m2 AS SELECT night, node, gpu, metric, value, source FROM metrics
 WHERE night < '2026-12-12';
DROP TABLE metrics;
CREATE TABLE metrics(night TEXT NOT NULL, node TEXT NOT NULL, gpu TEXT NOT NULL, metric TEXT NOT NULL,
 value REAL NOT NULL, source TEXT, PRIMARY KEY(node, gpu, metric, night));
CREATE INDEX metrics_night ON metrics(night);
INSERT INTO metrics SELECT * FROM m2;
DROP TABLE m2;""")
db.commit()
PY
"$HR" history --db "$TMP/old.sqlite" --night 2026-12-12 "$TMP/ids/2026-12-12" >"$TMP/old.out" 2>&1
if grep -q '^REGRESSED n001 gpu0 roofline.compute_gflops.bf16: regressed [0-9.]*% since 2026-12-09' "$TMP/old.out" &&
	python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("SELECT count(*) FROM metrics WHERE device_id IS NULL").fetchone()[0] > 0
assert db.execute("SELECT count(*) FROM metrics WHERE device_id IS NOT NULL").fetchone()[0] > 0
' "$TMP/old.sqlite"; then
	ok history_detection_old_database_gets_identity
else
	nok history_detection_old_database_gets_identity "no REGRESSED n001 gpu0 on night 12 of an older database" "$TMP/old.out"
fi

# ---- a 20% drop of n001's gpu0 bf16 roof from night 11 (2026-12-11), which
# roofline re-measures (flagged), and a 30% drop of n002's CPU socket memory
# roof (roofline measures a socket's roof points again every run), at 3%
# noise: on night 11 both are WARN on their first night (both measurements
# far below their own level: rule far_night, no drain candidate, exit 0);
# on night 12 both REGRESSED. The same nights with the CPU measured once (no
# roofs_again, as an older roofline wrote): the CPU only "info: one night
# far, not judged until it repeats" (far_once, not a regression) on night 11
run_nights first --sigma 0.03 --seed 5 --fault gpu_compute:0.2:10:1:0 --fault cpu_socket:0.3:10:2
if grep -q '^WARN n001 gpu0 roofline.compute_gflops.bf16: far below its own level tonight on both measurements: ' "$TMP/first.11" &&
	grep -q '^WARN n002 cpu roofline.memory_gbps: far below its own level tonight on both measurements: ' "$TMP/first.11" &&
	[ "$(grep -c '^WARN\|^REGRESSED' "$TMP/first.11")" = 2 ] && [ "$(cat "$TMP/first.11.rc")" = 0 ] &&
	! grep -q '^drain candidates' "$TMP/first.11" &&
	grep -q '^REGRESSED n001 gpu0 roofline.compute_gflops.bf16' "$TMP/first.12" &&
	grep -q '^REGRESSED n002 cpu roofline.memory_gbps' "$TMP/first.12" &&
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
r, f = j["regressions"], j["far_once"]
assert len(r) == 2 and all(x["rule"] == "far_night" and x["level"] == "warn" and x["measured_twice"] for x in r), r
assert all(x["pct_both"] >= 10 and 0 < x["chance"] <= x["chance_cut"] for x in r), r
assert f == [] and j["drain_candidates"] == []
' "$TMP/first.11.json"; then
	ok history_detection_first_night
else
	nok history_detection_first_night "night 11: $(grep '^WARN\|^info\|^REGRESSED' "$TMP/first.11" | cut -c1-70 | tr '\n' ';')" "$TMP/first.11"
fi
cpu_once() { # the CPU sockets measured once: no roofs_again
	python3 - "$1" <<'PY'
import glob, json, sys
for p in glob.glob(sys.argv[1] + "/*/*/roofline.json"):
    j = json.load(open(p))
    for d in j["results"]["devices"]:
        d.pop("roofs_again", None)
    json.dump(j, open(p, "w"))
PY
}
HOOK=cpu_once run_nights once --sigma 0.03 --seed 5 --fault gpu_compute:0.2:10:1:0 --fault cpu_socket:0.3:10:2
if grep -q '^WARN n001 gpu0 roofline.compute_gflops.bf16: far below its own level tonight on both measurements: ' "$TMP/once.11" &&
	grep -q '^info n002 cpu roofline.memory_gbps: one night far, not judged until it repeats: .*measured once' "$TMP/once.11" &&
	[ "$(grep -c '^WARN\|^REGRESSED' "$TMP/once.11")" = 1 ] && [ "$(cat "$TMP/once.11.rc")" = 0 ] &&
	grep -q '^REGRESSED n002 cpu roofline.memory_gbps' "$TMP/once.12" &&
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
f = j["far_once"]
assert len(f) == 1 and f[0]["level"] == "info" and f[0]["gpu"] == "cpu" and not f[0]["measured_twice"], f
' "$TMP/once.11.json"; then
	ok history_detection_first_night_measured_once_is_info
else
	nok history_detection_first_night_measured_once_is_info "night 11: $(grep '^WARN\|^info\|^REGRESSED' "$TMP/once.11" | cut -c1-70 | tr '\n' ';')" "$TMP/once.11"
fi

# ---- a healthy 8-node fleet with heavy-tailed (t3) noise at 3%, 17 nights:
# on the 17th (2026-12-17) n002's gpu5 fp8 roof is 30% below its own level
# on one night, a tail (the median rule alone said WARN "regressed once"):
# only info, one night far, nothing WARN or REGRESSED, exit 0
python3 tests/data/report/make-nights.py "$TMP/tail" --nodes 8 --nights 17 --sigma 0.03 --noise t3 --seed 10002 &&
	for d in "$TMP/tail"/2026-12-*; do
		"$HR" history --db "$TMP/tail.sqlite" --night "${d##*/}" --json "$TMP/tail.json" --force "$d" >"$TMP/tail.out" 2>&1
		echo $? >"$TMP/tail.rc"
	done
if grep -q '^info n002 gpu5 roofline.compute_gflops.fp8: one night far, not judged until it repeats: ' "$TMP/tail.out" &&
	! grep -q '^WARN\|^REGRESSED' "$TMP/tail.out" && [ "$(cat "$TMP/tail.rc")" = 0 ] &&
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["regressions"] == [] and [x["gpu"] for x in j["far_once"]] == ["gpu5"], j
' "$TMP/tail.json"; then
	ok history_detection_one_tail_night_is_info
else
	nok history_detection_one_tail_night_is_info "night 17: $(grep '^WARN\|^info\|^REGRESSED' "$TMP/tail.out" | cut -c1-70 | tr '\n' ';')" "$TMP/tail.out"
fi

run_nights healthy --sigma 0.03 --noise t3 --seed 11
bad=$(grep -l '^REGRESSED' "$TMP"/healthy.[0-9]* 2>/dev/null | head -1)
if [ -z "$bad" ] && [ "$(cat "$TMP/healthy.12.rc")" = 0 ] && grep -q 'series not judged' "$TMP/healthy.12"; then
	ok history_detection_heavy_tailed_healthy
else
	nok history_detection_heavy_tailed_healthy "a healthy series REGRESSED (${bad##*/})" "$bad"
fi
# ---- a database edited by hand: one earlier night's value of a series made
# text ('abc'), another Inf; night 12 checked again reads as with those rows
# deleted (left out), never as a value of 0
if command -v sqlite3 >/dev/null; then
	q="night = (SELECT min(night) FROM metrics) AND node = 'n001' AND gpu = 'gpu0' AND metric = 'roofline.compute_gflops.bf16'"
	q2="night = (SELECT max(night) FROM metrics WHERE night < '2026-12-12') AND node = 'n002' AND gpu = 'gpu1' AND metric = 'roofline.memory_gbps'"
	cp "$TMP/drop.sqlite" "$TMP/bad.sqlite" && cp "$TMP/drop.sqlite" "$TMP/del.sqlite"
	sqlite3 "$TMP/bad.sqlite" "UPDATE metrics SET value = 'abc' WHERE $q; UPDATE metrics SET value = 1e999 WHERE $q2;" &&
		sqlite3 "$TMP/del.sqlite" "DELETE FROM metrics WHERE $q; DELETE FROM metrics WHERE $q2;"
	"$HR" history --db "$TMP/bad.sqlite" --night 2026-12-12 >"$TMP/bad.out" 2>&1; r1=$?
	"$HR" history --db "$TMP/del.sqlite" --night 2026-12-12 >"$TMP/del.out" 2>&1; r2=$?
	if [ $r1 = $r2 ] && [ -s "$TMP/bad.out" ] && diff <(sed "s|$TMP/bad.sqlite|DB|g" "$TMP/bad.out") <(sed "s|$TMP/del.sqlite|DB|g" "$TMP/del.out") >/dev/null; then
		ok history_detection_non_numeric_value_left_out
	else
		nok history_detection_non_numeric_value_left_out "exit $r1 vs $r2; $(diff <(sed "s|$TMP/bad.sqlite|DB|g" "$TMP/bad.out") <(sed "s|$TMP/del.sqlite|DB|g" "$TMP/del.out") | head -4 | tr '\n' ';')" "$TMP/bad.out"
	fi
else
	echo "skip history_detection_non_numeric_value_left_out: no sqlite3"
fi
# --night with no inputs names a recorded night: a date for nights recorded
# under their start_utc exits 2 naming one (it checked 0 series, exit 0)
"$HR" history --db "$TMP/first.sqlite" --night 2026-12-11T00:00:00Z >"$TMP/nonight.out" 2>&1; rn=$?
"$HR" history --db "$TMP/first.sqlite" --night 2026-12-11 >"$TMP/night.out" 2>&1; ry=$?
if [ $rn = 2 ] && grep -q "error: no night '2026-12-11T00:00:00Z' in '$TMP/first.sqlite' (the latest recorded: '2026-12-12')" "$TMP/nonight.out" &&
	[ $ry != 2 ] && grep -q '^history: checked night 2026-12-11 ' "$TMP/night.out"; then
	ok history_detection_night_not_recorded
else
	nok history_detection_night_not_recorded "exit $rn / $ry" "$TMP/nonight.out"
fi
exit 0
