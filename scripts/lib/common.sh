# scripts/lib/common.sh - helpers shared by scripts/sweep, scripts/nightly and
# scripts/canary (sourced, from the repository root).
#
#   usage_error MSG       print "PROG: error: MSG" and the --help hint, exit 2
#   unknown_option ARG [NOTE]
#                         an argument the script does not take: "PROG: error:
#                         unknown option 'ARG' (did you mean --X?)" (the
#                         binaries' wording, base/ch_parse.c), X the nearest
#                         option its --help names, else NOTE; exit 2
#   sh_quote S            S as one POSIX shell word ('...', quotes escaped):
#                         safe in sh -c, sbatch --wrap and ssh command lines
#   valid_host H          is H a host name (letters, digits, '-', '_', dots
#                         between labels; no '/', no leading '-' or '.')
#   valid_uint V MIN MAX  is V a decimal whole number in [MIN, MAX]
#   valid_num V MIN MAX   is V a plain decimal number (no sign, hex or
#                         exponent) in [MIN, MAX]
#   caller_path P         P, made absolute against the caller's directory
#                         (CALLER_PWD: where the script was started, before
#                         it changed to the repository root)
#   need_arg "$@"         exit 2 unless option $1 has a value
#   valid_stamp T         is T a stamp YYYYmmddTHHMMSSZ of a real date and time
#   stamp_iso T           20250112T030000Z -> 2025-01-12T03:00:00Z
#   count_gpus [SEC]      NVIDIA GPUs visible here (nvidia-smi), 0 without;
#                         with SEC, nvidia-smi is stopped after SEC seconds
#                         (it hangs on a GPU fallen off the bus) and 0 said
#   has_opt BIN OPT       does $B/BIN's --help mention OPT
#   run_stage NAME LOG [mpi:N] BIN ARGS...
#                         run $B/BIN (BIN itself when an absolute path; under
#                         $MPIRUN $MPIRUN_NP N with mpi:N), output to LOG, with
#                         a progress line; sets last_rc (exit
#                         code, or "skipped" when BIN is not built) and folds
#                         it into stages_rc (0 ok, 1 a check failed, 4 a
#                         stage failed to run); RC1_TEXT (environment)
#                         is what its progress line says of exit 1 (default
#                         "check failed": a verdict, for a reporting stage)

PROG=$(basename "$0")
# sourced right after the script's `cd` to the repository root: OLDPWD is
# the directory the user ran it from
CALLER_PWD=${OLDPWD:-$PWD}
B=${B:-build}
case "$B" in /*) ;; *) B=$PWD/$B ;; esac

usage_error() {
	echo "$PROG: error: $1" >&2
	echo "try '$PROG --help' for more information" >&2
	exit 2
}

# nearest_option ARG: the option its --help lists (a line starting with
# it) nearest to ARG ("--name[=value]"), within 1 edit for a name of up to
# 4 letters, else 2 (base/ch_parse.c's rule); nothing when none is that near
nearest_option() {
	local self=$PWD/scripts/$PROG
	case "$1" in --?*) ;; *) return 0 ;; esac
	[ -x "$self" ] || return 0
	"$self" --help 2>/dev/null | sed -n 's/^ *\(-[A-Za-z], *\)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p' | sort -u | awk -v w="${1%%=*}" '
	function ed(a, b,   i, j, la, lb, d, prev, cur) {
		la = length(a); lb = length(b)
		for (j = 0; j <= lb; j++) prev[j] = j
		for (i = 1; i <= la; i++) {
			cur[0] = i
			for (j = 1; j <= lb; j++) {
				d = prev[j - 1] + (substr(a, i, 1) != substr(b, j, 1))
				if (prev[j] + 1 < d) d = prev[j] + 1
				if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1
				cur[j] = d
			}
			for (j = 0; j <= lb; j++) prev[j] = cur[j]
		}
		return prev[lb]
	}
	$0 != w { d = ed(substr(w, 3), substr($0, 3)); if (best == "" || d < best) { best = d; opt = $0 } }
	END { n = length(w) - 2; if (opt != "" && best <= (n <= 4 ? 1 : 2)) print opt }'
}

unknown_option() {
	local near
	case "$1" in
	-*) near=$(nearest_option "$1")
	    if [ -n "$near" ]; then
		    echo "$PROG: error: unknown option '$1' (did you mean $near?)" >&2
	    else
		    echo "$PROG: error: unknown option '$1'${2:+ ($2)}" >&2
	    fi ;;
	*) echo "$PROG: error: unexpected argument '$1'${2:+ ($2)}" >&2 ;;
	esac
	echo "try '$PROG --help' for more information" >&2
	exit 2
}

need_arg() {
	[ $# -ge 2 ] && [ -n "$2" ] || usage_error "option '$1' needs a value"
}

sh_quote() {
	local q="'\\''"
	printf "'%s'" "${1//\'/$q}"
}

valid_host() {
	[ ${#1} -le 253 ] && [[ "$1" =~ ^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9][A-Za-z0-9_-]*)*$ ]]
}

valid_uint() {
	[[ "$1" =~ ^[0-9]{1,9}$ ]] && [ $((10#$1)) -ge "$2" ] && [ $((10#$1)) -le "$3" ]
}

valid_num() {
	[[ "$1" =~ ^[0-9]{1,9}(\.[0-9]{1,9})?$ ]] &&
		awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v + 0 >= lo + 0 && v + 0 <= hi + 0) }'
}

caller_path() {
	case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$CALLER_PWD/$1" ;; esac
}

valid_stamp() {
	[[ "$1" =~ ^([0-9]{4})([0-9]{2})([0-9]{2})T([0-9]{2})([0-9]{2})([0-9]{2})Z$ ]] || return 1
	local y=$((10#${BASH_REMATCH[1]})) mo=$((10#${BASH_REMATCH[2]})) d=$((10#${BASH_REMATCH[3]}))
	local h=$((10#${BASH_REMATCH[4]})) mi=$((10#${BASH_REMATCH[5]})) s=$((10#${BASH_REMATCH[6]}))
	local dim=(0 31 28 31 30 31 30 31 31 30 31 30 31)
	((y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))) && dim[2]=29
	((mo >= 1 && mo <= 12 && d >= 1 && d <= dim[mo] && h <= 23 && mi <= 59 && s <= 59))
}

stamp_iso() {
	local s=$1
	echo "${s:0:4}-${s:4:2}-${s:6:2}T${s:9:2}:${s:11:2}:${s:13:2}Z"
}

count_gpus() {
	local n=0
	if command -v nvidia-smi >/dev/null 2>&1; then
		if [ -n "${1:-}" ]; then
			n=$(timeout -k 1 "$1" nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | grep -c '^[0-9]') || n=0
		else
			n=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | grep -c '^[0-9]') || n=0
		fi
	fi
	echo "${n:-0}"
}

declare -A _help_cache=()
has_opt() {
	local bin=$1 opt=$2
	[ -x "$B/$bin" ] || return 1
	if [ -z "${_help_cache[$bin]+x}" ]; then
		_help_cache[$bin]=$("$B/$bin" --help 2>&1 </dev/null || true)
	fi
	grep -qE -- "(^|[ ,])$opt([ =,]|\$)" <<<"${_help_cache[$bin]}"
}

MPIRUN_NP=${MPIRUN_NP:--np}
if [ -z "${MPIRUN:-}" ]; then
	MPIRUN="mpirun --oversubscribe --bind-to none"
	[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
fi

# RC1_TEXT is set per stage only (run_stage), never taken from the caller's
# environment
unset RC1_TEXT
_quiet=0 _tty=0 _stage=0 nstages=0 stages_rc=0 last_rc=0 timeout_sec=${timeout_sec:-600}
progress_init() {
	_quiet=$1
	[ -t 1 ] && _tty=1
}

say() {
	[ "$_quiet" = 1 ] || echo "$@"
}

_rc_text() {
	case $1 in
	0) echo "ok" ;;
	1) echo "${RC1_TEXT:-check failed} (exit 1)" ;;
	2) echo "usage or input error (exit 2)" ;;
	3) echo "unavailable here (exit 3)" ;;
	4) echo "run-time error (exit 4)" ;;
	124|137) echo "timed out after ${timeout_sec} s" ;;
	skipped) echo "skipped" ;;
	*) echo "failed (exit $1)" ;;
	esac
}

run_stage() {
	local name=$1 log=$2 np=0 t0 t1 sec
	shift 2
	case "$1" in mpi:*) np=${1#mpi:}; shift ;; esac
	local bin=$1 path
	shift
	case "$bin" in /*) path=$bin ;; *) path=$B/$bin ;; esac
	_stage=$((_stage + 1))
	if [ ! -x "$path" ]; then
		last_rc=skipped
		echo "$bin: not built ($path missing); run 'make'" >"$log"
		[ "$_quiet" = 1 ] || printf '[%d/%d] %-28s skipped: %s not built yet\n' "$_stage" "$nstages" "$name" "$path"
		return 0
	fi
	[ "$_quiet" = 1 ] || [ "$_tty" = 0 ] || printf '[%d/%d] %-28s running...\r' "$_stage" "$nstages" "$name"
	t0=$(date +%s.%N)
	if [ "$np" -gt 0 ]; then
		# shellcheck disable=SC2086
		timeout -k 10 "$timeout_sec" $MPIRUN $MPIRUN_NP "$np" "$path" "$@" >"$log" 2>&1 </dev/null
	else
		timeout -k 10 "$timeout_sec" "$path" "$@" >"$log" 2>&1 </dev/null
	fi
	last_rc=$?
	t1=$(date +%s.%N)
	sec=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	[ "$_quiet" = 1 ] || printf '[%d/%d] %-28s %s (%s s, log %s)\033[K\n' "$_stage" "$nstages" "$name" \
		"$(_rc_text $last_rc)" "$sec" "$log" | { [ "$_tty" = 1 ] && cat || sed 's/\x1b\[K//'; }
	case $last_rc in
	0|3) ;;
	1) [ "$stages_rc" = 0 ] && stages_rc=1 ;;
	*) stages_rc=4 ;;
	esac
	return 0
}
