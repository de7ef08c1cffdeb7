#!/bin/bash
# function_length.sh - no function of the project's sources is longer than
# 150 lines (docs/architecture.md, "How the rules are enforced"): every C and
# CUDA file git knows (*.c, *.h, *.cu), tests/ included (a Criterion test or
# a test's helper is read as often as the code it tests, so the rule is the
# same). A finding names the file, the line, the function and its length.
#
# A function's length is counted as universal-ctags counts it: from the line
# naming the function to its closing brace. The project's style puts a
# function's opening "{" and closing "}" in column 0, so a scan of column-0
# braces finds the functions without ctags: on the tree of this commit it
# agrees with `ctags --fields=+ne --c-kinds=f` on the length of every
# function of more than one line (a one-line function has no column-0
# brace) in the .c and .h files outside tests/; in tests/ ctags takes a few
# json_array_foreach loops for functions and misses Criterion's Test()
# bodies, in .cu files it misses most kernels, all of which the scan reads
# as written. Where universal-ctags is
# installed, that agreement is checked again here, so that a function
# written in another style cannot escape the scan; elsewhere that check is
# skipped. Then the scan runs on a small tree with an over-long function,
# which it must report. Checked when it was written, on the real tree: a
# 151-line function added to report/hr_util.c made this test fail, naming
# the function, its file, its line and its length (one of 150 lines did
# not), and a function with its "{" at the end of its declaration line made
# the ctags check fail.
cd "$(dirname "$0")/../.." || exit 1
MAX=150

# scan FILE...: one line "LENGTH FILE LINE NAME" per function, a body from a
# "{" in column 0 to the next "}" in column 0, counted from the line that
# names the function: the first line of the declaration (the lines just
# before the "{", after a blank line, a ";", a "}", a comment or a
# preprocessor line; comments within a line left out) with a name followed
# by "(" (C++ template arguments and __attribute__((...)) skipped). Criterion's Test(suite, name) is named so.
scan() {
	awk '
	FNR == 1 { n = 0; body = 0 }
	body {
		if ($0 ~ /^}/) {
			print FNR - start + 1, FILENAME, start, name
			body = 0
		}
		next
	}
	/^\{/ {
		name = "?"; start = FNR
		for (i = 1; i <= n; i++) {
			s = sig[i]
			gsub(/__attribute__[ \t]*\(\([^)]*\)\)/, "", s)
			if (match(s, /[A-Za-z_][A-Za-z0-9_]*(<[^>]*>)?[ \t]*\(/)) {
				name = substr(s, RSTART, RLENGTH)
				sub(/(<[^>]*>)?[ \t]*\($/, "", name)
				if (name ~ /^(Test|ParameterizedTest|Theory)$/ && match(s, /\([^)]*\)/))
					name = name substr(s, RSTART, RLENGTH)
				start = sigline[i]
				break
			}
		}
		body = 1; n = 0
		next
	}
	{ s = $0; gsub(/\/\*.*\*\//, "", s) } # a comment within the line
	s ~ /^[ \t]*$/ || s ~ /^#/ || s ~ /^[ \t]*\/\// || s ~ /;[ \t]*$/ || s ~ /\*\/[ \t]*$/ || s ~ /^}/ ||
	s ~ /}[ \t]*$/ { n = 0; next }
	{ sig[++n] = s; sigline[n] = FNR }
	' "$@"
}

# over FILE...: one line "FILE:LINE: NAME is N lines (at most MAX)" per
# function over MAX lines.
over() {
	scan "$@" | awk -v max=$MAX '$1 > max {
		name = $4; for (i = 5; i <= NF; i++) name = name " " $i
		printf "%s:%s: %s is %d lines (at most %d)\n", $2, $3, name, $1, max
	}'
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

mapfile -t files < <(git ls-files '*.c' '*.h' '*.cu' 2>/dev/null)
if [ ${#files[@]} -eq 0 ]; then
	# not a git checkout: the same files found by name
	mapfile -t files < <(find base hw kernels comm bench report scripts tests tools \
		\( -name '*.c' -o -name '*.h' -o -name '*.cu' \) -type f 2>/dev/null | sort)
fi
nfn=$(scan "${files[@]}" | wc -l)
report "function_length: no function over $MAX lines ($nfn functions in ${#files[@]} source files)" \
	"$(over "${files[@]}")"

# ---- the scan agrees with universal-ctags, where it is installed
if ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
	mapfile -t lib < <(printf '%s\n' "${files[@]}" | grep -E '\.[ch]$' | grep -v '^tests/')
	# "FILE NAME LENGTH" of every function of more than one line (a
	# one-line function has no column-0 brace: nothing to measure)
	want=$(ctags --fields=+ne --c-kinds=f -o - "${lib[@]}" | awk -F'\t' '{
		l = e = ""
		for (i = 4; i <= NF; i++) {
			if ($i ~ /^line:/) l = substr($i, 6)
			if ($i ~ /^end:/) e = substr($i, 5)
		}
		if (l != "" && e != "" && e - l + 1 > 1) print $2, $1, e - l + 1
	}' | sort)
	got=$(scan "${lib[@]}" | awk '$1 > 1 { print $2, $4, $1 }' | sort)
	if [ -z "$want" ]; then
		echo "skip function_length_ctags: ctags gave no function lengths (no end: field)"
	else
		report "function_length_ctags: the scan measures the $(wc -l <<<"$want") functions universal-ctags finds outside tests/ alike" \
			"$(comm -23 <(echo "$want") <(echo "$got") | sed 's/^\([^ ]*\) \([^ ]*\) \([0-9]*\)$/\1: \2: ctags counts \3 lines, the scan does not/')"
	fi
else
	echo "skip function_length_ctags: universal-ctags is not installed (the scan alone decides)"
fi

# ---- the check reports what it must (a tree built here, never committed)
TMP=$(mktemp -d /tmp/ch_fnlen_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/report" "$TMP/tests"
body() { # N: N statement lines
	local i
	for ((i = 0; i < $1; i++)); do printf '\tx += %d;\n' $i; done
}
{
	printf '/* a comment (with parentheses) */\nstatic int ok_at_limit(int x)\n{\n'
	body $((MAX - 4)); printf '\treturn x;\n}\n\n'
	printf 'static inline int\ntoo_long(const char *s,\n\t int x) /* %s */\n{\n' "a reason"
	body $((MAX - 4)); printf '\treturn x;\n}\n'
	printf 'static int one_line(void) { return 0; }\n'
	printf 'static const int table[] = {\n\t1, 2,\n};\n'
} >"$TMP/report/r.c"
{
	printf '#include <criterion/criterion.h>\n\nTest(suite, long_test)\n{\n\tint x = 0;\n'
	body $((MAX + 10)); printf '\tcr_assert(x);\n}\n'
} >"$TMP/tests/t.c"
out=$(cd "$TMP" && over report/r.c tests/t.c)
if grep -qxF "report/r.c:$((MAX + 4)): too_long is $((MAX + 1)) lines (at most $MAX)" <<<"$out" &&
	grep -qxF "tests/t.c:3: Test(suite, long_test) is $((MAX + 15)) lines (at most $MAX)" <<<"$out" &&
	[ "$(wc -l <<<"$out")" = 2 ]; then
	echo "ok function_length: functions over $MAX lines in a test tree are reported with file, line and length, one of $MAX not"
else
	echo "not ok function_length: the check gave, on a test tree:"
	sed 's/^/    /' <<<"$out"
fi
exit 0
