#!/bin/bash
# file_length.sh - no source file of the project is longer than 1,500 lines
# (docs/architecture.md, "How the rules are enforced"): every file git knows
# but the documentation (*.md), the test inputs (tests/data/), the tests'
# tables (*.tsv) and the tools' settings (.gitignore, *.supp), so C, CUDA,
# headers, Python, shell, the scripts and the Makefile. A finding names the
# file and its length.
#
# LENGTH_EXCEPT lists the files still over the limit, each being cut by what
# it does; each is to be removed from the list when it is cut, and a listed
# file that is no longer over the limit (or no longer exists) is a finding
# too, so that the list only shrinks. Then the check runs on a small tree
# with a file over the limit, which it must report.
cd "$(dirname "$0")/../.." || exit 1
MAX=1500
LENGTH_EXCEPT=""

# sources: the files the rule applies to, one per line, from git (or, in a
# tree that is not a checkout, from find)
sources() {
	{ git ls-files 2>/dev/null || find . -type f ! -path './build/*' ! -path './.git/*' | sed 's|^\./||'; } |
		grep -vE '^tests/data/|\.(md|tsv|supp)$|(^|/)\.gitignore$' | sort
}

# over EXCEPT: one line "FILE: N lines (at most MAX)" per source file over
# MAX lines and not in EXCEPT, and one per file of EXCEPT that is not.
over() {
	local except=$1 f n
	while read -r f; do
		[ -f "$f" ] || continue
		n=$(wc -l <"$f")
		if [ "$n" -gt $MAX ]; then
			grep -qxF "$f" <<<"$except" || echo "$f: $n lines (at most $MAX)"
		fi
	done < <(sources)
	while read -r f; do
		[ -n "$f" ] || continue
		if [ ! -f "$f" ]; then
			echo "LENGTH_EXCEPT $f: no such file (remove it from the list)"
		elif [ "$(wc -l <"$f")" -le $MAX ]; then
			echo "LENGTH_EXCEPT $f: $(wc -l <"$f") lines, no longer over $MAX (remove it from the list)"
		fi
	done <<<"$except"
}

report() {
	local name=$1 out=$2
	if [ -z "$out" ]; then
		echo "ok $name"
	else
		echo "not ok $name: $(wc -l <<<"$out") finding(s):"
		sed 's/^/    /' <<<"$out"
	fi
}

if [ -n "$LENGTH_EXCEPT" ]; then
	cut_note="; $(wc -l <<<"$LENGTH_EXCEPT") still being cut: $(tr '\n' ' ' <<<"$LENGTH_EXCEPT" | sed 's/ $//')"
else
	cut_note=""
fi
report "file_length: no source file over $MAX lines ($(sources | wc -l) files$cut_note)" \
	"$(over "$LENGTH_EXCEPT")"

# ---- the check reports what it must (a tree built here, never committed)
TMP=$(mktemp -d /tmp/ch_filelen_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/report" "$TMP/scripts" "$TMP/tests/data" "$TMP/docs"
lines() { # N: N lines
	local i
	for ((i = 0; i < $1; i++)); do echo "x += $i;"; done
}
lines $((MAX + 1)) >"$TMP/report/long.c"
lines $MAX >"$TMP/report/at_limit.c"
lines $((MAX + 1)) >"$TMP/scripts/long-script"
lines $((MAX + 1)) >"$TMP/report/excepted.c"
lines 10 >"$TMP/report/cut.c"
lines $((MAX + 1)) >"$TMP/tests/data/input.log"
lines $((MAX + 1)) >"$TMP/docs/long.md"
out=$(cd "$TMP" && over "report/excepted.c
report/cut.c
report/gone.c")
want="report/long.c: $((MAX + 1)) lines (at most $MAX)
scripts/long-script: $((MAX + 1)) lines (at most $MAX)
LENGTH_EXCEPT report/cut.c: 10 lines, no longer over $MAX (remove it from the list)
LENGTH_EXCEPT report/gone.c: no such file (remove it from the list)"
if [ "$out" = "$want" ]; then
	echo "ok file_length: files over $MAX lines in a test tree are reported with their length, one of $MAX, an excepted one, data and docs not; an exception no longer needed is reported"
else
	echo "not ok file_length: the check gave, on a test tree:"
	sed 's/^/    /' <<<"$out"
fi
exit 0
