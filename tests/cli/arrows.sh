#!/bin/bash
# arrows.sh - the include rules of docs/architecture.md, checked on every
# source file (headers too, which the build's per-part include views only
# see through the .c files that include them):
#  - an include of ours names its file from the repository root
#    ("base/ch_common.h"), without "..", and that file exists; a bare name is
#    a generated header (build/gen);
#  - its part may include the part it names (the table ALLOWED below);
#  - the Makefile's include views (PART_USES_*) allow no more than the table;
#  - no circle between files (docs/architecture.md, "The picture of the
#    tree"): a header includes a header, a .c or .cu file uses (calls, or
#    reads a variable) what another one defines, as nm reads the build's
#    objects ($B/obj); a set of files that reach each other along these
#    arrows is a circle (tests/cli/check-circles.py); none is excepted.
# Then the same checks on small trees with forbidden includes and with
# circles, which they must reject, so that this test can fail.
cd "$(dirname "$0")/../.." || exit 1

# The design: what each part may include (itself included). Not listed, so
# forbidden: kernels <-> comm, kernels/comm -> bench, report -> kernels, comm
# or bench, base -> anything of ours, hw -> anything but base.
declare -A ALLOWED=(
	[base]="base"
	[hw]="base hw"
	[kernels]="base hw kernels"
	[comm]="base hw comm"
	[bench]="base hw kernels comm bench"
	[report]="base hw report"
)
GENERATED="ch_git_rev.h"

# check_tree ROOT: one line "FILE: WHY" per include that breaks a rule.
check_tree() {
	local root=$1 f inc part to
	(cd "$root" && find base hw kernels comm bench report tests/unit \
		\( -name '*.c' -o -name '*.h' -o -name '*.cu' \) -type f 2>/dev/null | sort) |
	while read -r f; do
		part=${f%%/*}
		[ "$part" = tests ] && part=
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$root/$f" |
		while read -r inc; do
			case $inc in
			*..*) echo "$f: includes \"$inc\": a path with '..'"; continue ;;
			*/*) ;;
			*) [[ " $GENERATED " == *" $inc "* ]] ||
				echo "$f: includes \"$inc\": name the folder from the repository root"
				continue ;;
			esac
			if [ ! -f "$root/$inc" ]; then
				echo "$f: includes \"$inc\": no such file from the repository root"
				continue
			fi
			to=${inc%%/*}
			[ -z "$part" ] && continue
			[[ " ${ALLOWED[$part]} " == *" $to "* ]] ||
				echo "$f: includes \"$inc\": $part may not include $to (may: ${ALLOWED[$part]})"
		done
	done
}

# check_views MAKEFILE: one line per include view wider than the table.
check_views() {
	local part u uses
	for part in "${!ALLOWED[@]}"; do
		uses=$(sed -n "s/^PART_USES_$part[[:space:]]*:=[[:space:]]*//p" "$1")
		[ -n "$uses" ] || { echo "$1: no PART_USES_$part"; continue; }
		for u in $uses; do
			[[ " ${ALLOWED[$part]} " == *" $u "* ]] ||
				echo "$1: PART_USES_$part lets $part include $u"
		done
	done
}

# Inside report/, stages (docs/architecture.md, "Inside report/"): a stage may
# include itself, the stages before it and the top of report/ (hr_util.h);
# the top (the command) may include every stage; a backward arrow is a
# finding (none is excepted).
declare -A STAGE_ALLOWED=(
	[read]="read top"
	[judge]="read judge top"
	[canary]="read judge canary top"
	[history]="read judge history top"
	[render]="read judge render top"
)

# check_stages ROOT: one line "FILE: WHY" per include across report's stages
# that breaks the stage order.
check_stages() {
	local root=$1 f inc st to
	(cd "$root" && find report -mindepth 2 \( -name '*.c' -o -name '*.h' \) -type f 2>/dev/null | sort) |
	while read -r f; do
		st=$(cut -d/ -f2 <<<"$f")
		if [ -z "${STAGE_ALLOWED[$st]+x}" ]; then
			echo "$f: report/$st/ is not a stage of docs/architecture.md"
			continue
		fi
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(report\/[^"]*\)".*/\1/p' "$root/$f" |
		while read -r inc; do
			to=$(cut -d/ -f2 <<<"$inc")
			[[ $to == *.h ]] && to=top
			[[ " ${STAGE_ALLOWED[$st]} " == *" $to "* ]] && continue
			echo "$f: includes \"$inc\": stage $st may not include $to (may: ${STAGE_ALLOWED[$st]})"
		done
	done
}

# check_circles ROOT OBJDIR: the circles between ROOT's files, one finding
# a circle (its files, then the arrows around it); a failure of the script
# itself is a finding too.
check_circles() {
	python3 tests/cli/check-circles.py "$1" "$2" 2>&1
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

n=$(git ls-files 'base/*' 'hw/*' 'kernels/*' 'comm/*' 'bench/*' 'report/*' 'tests/unit/*' |
	grep -cE '\.(c|h|cu)$')
report "arrows: includes of $n source files follow docs/architecture.md" "$(check_tree .)"
report "arrows: the Makefile's include views allow no forbidden arrow" "$(check_views Makefile)"
report "arrows: report/'s stages include only earlier stages" "$(check_stages .)"
OBJ=${B:-build}/obj
if [ -n "$(find "$OBJ" -name '*.o' 2>/dev/null | head -1)" ]; then
	report "arrows: no circle between files (headers' includes, the objects' calls)" \
		"$(check_circles . "$OBJ")"
else
	echo "skip arrows: no circle between files: no objects under $OBJ (make builds them)"
fi

# ---- the check rejects what it must (a tree built here, never committed)
TMP=$(mktemp -d /tmp/ch_arrows_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP"/{base,hw,kernels/cpu,comm,bench/common,report}
for h in base/b.h hw/h.h kernels/k.h comm/c.h bench/common/o.h report/r.h; do : >"$TMP/$h"; done
printf '#include "base/b.h"\n#include "comm/c.h"\n' >"$TMP/kernels/cpu/bad1.c"
printf '#include "kernels/k.h"\n' >"$TMP/comm/bad2.c"
printf '#include "bench/common/o.h"\n' >"$TMP/kernels/bad3.h"
printf '#include "kernels/k.h"\n' >"$TMP/report/bad4.c"
printf '#include "hw/h.h"\n' >"$TMP/base/bad5.c"
printf '#include "kernels/k.h"\n' >"$TMP/hw/bad6.c"
printf '#include "../comm/c.h"\n' >"$TMP/kernels/bad7.c"
printf '#include "k.h"\n' >"$TMP/kernels/bad8.c"
printf '#include "base/b.h"\n#include "hw/h.h"\n#include "kernels/k.h"\n#include "comm/c.h"\n#include "ch_git_rev.h"\n' >"$TMP/bench/good.c"
out=$(check_tree "$TMP")
want="kernels/cpu/bad1.c:comm/c.h comm/bad2.c:kernels/k.h kernels/bad3.h:bench/common/o.h report/bad4.c:kernels/k.h base/bad5.c:hw/h.h hw/bad6.c:kernels/k.h kernels/bad7.c:../comm/c.h kernels/bad8.c:k.h"
miss=
for w in $want; do
	grep -qF "${w%%:*}: includes \"${w#*:}\"" <<<"$out" || miss+=" ${w%%:*}"
done
if [ -z "$miss" ] && [ "$(wc -l <<<"$out")" = 8 ] && ! grep -q good.c <<<"$out"; then
	echo "ok arrows: forbidden includes in a test tree are each reported, allowed ones not"
else
	echo "not ok arrows: the check missed forbidden includes in$miss or reported more:"
	sed 's/^/    /' <<<"$out"
fi
mkdir -p "$TMP"/report/{read,render,judge,misc}
: >"$TMP/report/render/r.h"; : >"$TMP/report/read/m.h"
printf '#include "report/render/r.h"\n' >"$TMP/report/read/bad9.c"
printf '#include "report/read/m.h"\n#include "report/hr_top.h"\n' >"$TMP/report/judge/good2.c"
: >"$TMP/report/misc/bad10.c"
out=$(check_stages "$TMP")
if grep -qF 'report/read/bad9.c: includes "report/render/r.h"' <<<"$out" &&
	grep -qF 'report/misc/bad10.c: report/misc/ is not a stage' <<<"$out" &&
	[ "$(wc -l <<<"$out")" = 2 ]; then
	echo "ok arrows: a backward include between report's stages is reported, a forward one not"
else
	echo "not ok arrows: the stage check gave:"
	sed 's/^/    /' <<<"$out"
fi
sed 's/^PART_USES_kernels .*/PART_USES_kernels := base hw kernels comm/' Makefile >"$TMP/Makefile"
if check_views "$TMP/Makefile" | grep -q "PART_USES_kernels lets kernels include comm"; then
	echo "ok arrows: a Makefile view wider than the table is reported"
else
	echo "not ok arrows: a Makefile view letting kernels include comm went unreported"
fi

# circles: two .c files calling each other, three in a ring, two headers
# including each other (compiled here, so that the calls are read from
# objects as on the real tree)
C=$TMP/circles
mkdir -p "$C"/{base,hw,report/read,report/judge,obj/base,obj/report/read,obj/report/judge}
printf 'int b(void);\nint a(void) { return b(); }\n' >"$C/base/a.c"
printf 'int a(void);\nint b(void) { return a(); }\n' >"$C/base/b.c"
printf 'int b(void);\nint lone(void) { return b(); }\n' >"$C/base/lone.c"
printf 'int j(void);\nint r(void) { return j(); }\n' >"$C/report/read/r.c"
printf 'int k(void);\nint j(void) { return k(); }\n' >"$C/report/judge/j.c"
printf 'int r(void);\nint k(void) { return r(); }\n' >"$C/report/judge/k.c"
printf '#include "hw/y.h"\n' >"$C/hw/x.h"
printf '#include "hw/x.h"\n' >"$C/hw/y.h"
printf '#include "hw/x.h"\n' >"$C/hw/z.c"
built=1
for f in base/a base/b base/lone report/read/r report/judge/j report/judge/k; do
	${CC:-cc} -c "$C/$f.c" -o "$C/obj/$f.o" 2>/dev/null || built=
done
if [ -z "$built" ]; then
	echo "skip arrows: circles in a test tree: ${CC:-cc} cannot compile it"
else
	out=$(check_circles "$C" "$C/obj")
	if grep -qxF 'circle of 2 files: base/a.c base/b.c' <<<"$out" &&
		grep -qxF 'circle of 3 files: report/judge/j.c report/judge/k.c report/read/r.c' <<<"$out" &&
		grep -qxF 'circle of 2 files: hw/x.h hw/y.h' <<<"$out" &&
		grep -qF 'base/a.c -> base/b.c (uses b)' <<<"$out" &&
		[ "$(grep -c '^circle' <<<"$out")" = 3 ] && ! grep -qE 'lone|z\.c' <<<"$out"; then
		echo "ok arrows: circles in a test tree (two files calling each other, three in a ring, two headers) are each reported, arrows into them not"
	else
		echo "not ok arrows: the circle check gave, on a test tree:"
		sed 's/^/    /' <<<"$out"
	fi
fi
exit 0
