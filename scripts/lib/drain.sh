# scripts/lib/drain.sh - drain and resume through Slurm, the tool's own
# drains only (sourced by scripts/healthcheck and scripts/nightly, after
# scripts/lib/common.sh). Method: docs/workflows.md, "What drains and what
# resumes".
#
# Every Reason the tool sets starts with DRAIN_PREFIX ("clusterhealth:");
# a node drained with any other Reason (a person's, NHC's, Slurm's own
# "Prolog error") is never resumed. Each drain and resume is a row of the
# drain history HIST (TAB-separated: epoch seconds, node, drain|resume|
# escalate, fault, text), the evidence of why.
#
#   drain_reason TEXT          TEXT as a Reason: '"' as "'", at most 250
#                              bytes (cut at a word, "...")
#   node_drain_state NODE      prints "STATE<TAB>REASON" from scontrol show
#                              node (STATE e.g. IDLE+DRAIN); 1 when scontrol
#                              failed (an unknown node), 3 when it did not
#                              answer within DRAIN_SCONTROL_SEC s
#   drain_node NODE FAULT TEXT HIST DAYS
#                              drain NODE for FAULT ("gpu1 Xid 79 (fallen off
#                              the bus)"), Reason "clusterhealth: TEXT"; a
#                              second drain for the same FAULT within DAYS
#                              days escalates: Reason "clusterhealth: drained
#                              2x in DAYS days for FAULT: replace", which
#                              resume_node never undoes. A node drained
#                              already for FAULT is left as it is, and one
#                              drained by anyone else keeps its Reason.
#                              Sets drain_msg.
#   resume_node NODE EVIDENCE HIST
#                              resume NODE when it is drained by the tool
#                              (Reason prefix) and not escalated; 0 resumed,
#                              1 not drained, 2 drained by someone else or
#                              escalated (left alone), 4 scontrol failed.
#                              Sets resume_msg.
DRAIN_PREFIX="clusterhealth:"
# each scontrol call is stopped after DRAIN_SCONTROL_SEC seconds (default
# 20): it retries for long when slurmctld does not answer, and the gate
# must end before Slurm kills it (60 s); a stopped call is a failed one
DRAIN_SCONTROL_SEC=${DRAIN_SCONTROL_SEC:-20}
_scontrol() { timeout -k 2 "$DRAIN_SCONTROL_SEC" scontrol "$@"; }

drain_reason() {
	python3 - "$1" <<'PY'
import sys
s, limit = sys.argv[1].replace('"', "'"), 250
size = lambda t: len(t.encode("utf-8", "surrogateescape"))
if size(s) > limit:
    cut = s
    while size(cut) > limit - 3:
        cut = cut[:-1]
    if s[len(cut)] != " " and cut.rfind(" ") > limit // 2:
        cut = cut[:cut.rfind(" ")]
    s = cut.rstrip(" ;,(") + "..."
sys.stdout.buffer.write(s.encode("utf-8", "surrogateescape"))
PY
}

node_drain_state() {
	local out rc
	out=$(_scontrol show node -o -- "$1" 2>/dev/null)
	rc=$?
	case $rc in
	0) ;;
	124 | 137) return 3 ;; # stopped by timeout: not answered, not unknown
	*) return 1 ;;
	esac
	python3 - "$out" <<'PY'
import re, sys
t = sys.argv[1]
st = re.search(r"(?:^| )State=(\S+)", t)
# Reason= runs to the next " Key=" of scontrol's one-line output
rs = re.search(r" Reason=(.*?)(?: \[[^\]]*\])?(?= [A-Z][A-Za-z]*=|$)", t)
print("%s\t%s" % (st.group(1) if st else "", rs.group(1) if rs else ""))
PY
}

# _hist_count HIST NODE FAULT SINCE: drains of NODE for FAULT at or after SINCE
_hist_count() {
	[ -f "$1" ] || { echo 0; return; }
	awk -F'\t' -v n="$2" -v f="$3" -v s="$4" '$2 == n && $3 == "drain" && $4 == f && $1 >= s { c++ } END { print c + 0 }' "$1"
}

_hist_add() { # HIST NODE WHAT FAULT TEXT
	local t
	t=$(date +%s)
	mkdir -p "$(dirname "$1")" 2>/dev/null
	printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$2" "$3" "${4//$'\t'/ }" "${5//$'\t'/ }" >>"$1"
}

drain_node() {
	local node=$1 fault=$2 text=$3 hist=$4 days=$5 n reason
	n=$(_hist_count "$hist" "$node" "$fault" $(($(date +%s) - days * 86400)))
	n=$((n + 1))
	if [ "$n" -ge 2 ]; then
		reason=$(drain_reason "$DRAIN_PREFIX drained ${n}x in $days days for $fault: replace")
	else
		reason=$(drain_reason "$DRAIN_PREFIX $text")
	fi
	# already drained for it (the gate runs every HealthCheckInterval): no new drain
	local st
	st=$(node_drain_state "$node") && case "${st%%$'\t'*}" in *DRAIN*)
		case "${st#*$'\t'}" in "$DRAIN_PREFIX $text" | "$DRAIN_PREFIX "*" for $fault: replace" | "$DRAIN_PREFIX $fault"*)
			drain_msg="$node: drained already (Reason: ${st#*$'\t'})"
			return 0 ;;
		"$DRAIN_PREFIX"*) ;;
		*)	# a person's drain (or Slurm's): its Reason is kept
			drain_msg="$node: drained already by someone else (Reason: ${st#*$'\t'}); Reason kept, not '$reason'"
			return 0 ;;
		esac ;;
	esac
	if _scontrol update "NodeName=$node" State=DRAIN "Reason=$reason" 2>/dev/null; then
		[ "$n" -ge 2 ] && _hist_add "$hist" "$node" escalate "$fault" "$text"
		_hist_add "$hist" "$node" drain "$fault" "$text"
		drain_msg="drained $node: $reason"
		return 0
	fi
	drain_msg="scontrol could not drain $node (Reason: $reason)"
	return 4
}

resume_node() {
	local node=$1 evidence=$2 hist=$3 st state reason
	resume_msg=
	st=$(node_drain_state "$node")
	case $? in
	0) ;;
	3) resume_msg="$node: scontrol show node did not answer within $DRAIN_SCONTROL_SEC s (DRAIN_SCONTROL_SEC); not resumed"; return 4 ;;
	*) resume_msg="$node: unknown to Slurm (scontrol show node failed)"; return 4 ;;
	esac
	state=${st%%$'\t'*} reason=${st#*$'\t'}
	case "$state" in *DRAIN*) ;; *) resume_msg="$node: not drained ($state)"; return 1 ;; esac
	case "$reason" in
	"$DRAIN_PREFIX drained "*"x in "*" days for "*": replace"*)
		resume_msg="$node: not resumed: escalated (Reason: $reason)"
		return 2 ;;
	"$DRAIN_PREFIX"*) ;;
	*)
		resume_msg="$node: not resumed: drained by someone else or for another reason (Reason: ${reason:-none}); the tool resumes only its own drains"
		return 2 ;;
	esac
	if _scontrol update "NodeName=$node" State=RESUME 2>/dev/null; then
		_hist_add "$hist" "$node" resume "${reason#"$DRAIN_PREFIX "}" "$evidence"
		resume_msg="resumed $node (was: $reason): $evidence"
		return 0
	fi
	resume_msg="scontrol could not resume $node"
	return 4
}
