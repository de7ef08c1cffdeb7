#!/bin/bash
# kubernetes.sh - deploy/kubernetes and scripts/k8s-node-verdicts, offline
# (no cluster here):
#   - every manifest validated against the Kubernetes 1.29 schemas with
#     kubernetes-validate --strict (PyPI; installed into $B/k8s-venv on
#     first use), the node sweep Job with a node and a night filled in;
#     a manifest with one wrong entry fails it;
#   - the node-problem-detector plugin (deploy/kubernetes/npd): its config
#     is the custom-plugin kind, names the wrapper and its condition; the
#     wrapper answers in the plugin protocol (exit 0 OK, 1 problem, 2
#     unknown; one line) for stand-in gates that pass, fail, are
#     unavailable, print nothing, print control characters or a long line,
#     or are missing; and for scripts/healthcheck when the tree has it;
#   - scripts/k8s-node-verdicts on a fleet report (fleet-inventory: 2 drain
#     candidates, 1 FAIL not confirmed, 3 WARN) against a recorded cluster
#     (a kubectl stand-in on PATH that logs its arguments): the commands
#     printed without --apply and none run; with --apply exactly those run;
#     only its own label, annotation and taint, lifted from a node that now
#     passes, never another's taint; a FAIL not confirmed untouched; a node
#     name that is not a Kubernetes name refused; a kubectl that fails is
#     exit 4.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
T=$(mktemp -d /tmp/ch_k8s.XXXXXX)
trap 'rm -rf "$T"' EXIT
K=deploy/kubernetes
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -s "$3" ] && head -20 "$3" | sed 's/^/    /'; }

# ---- the manifests against the schemas
VENV=$B/k8s-venv
if [ ! -x "$VENV/bin/kubernetes-validate" ]; then
	rm -rf "$VENV"
	{ "$PY" -m venv "$VENV" && "$VENV/bin/pip" install -q 'kubernetes-validate==1.37.0'; } >"$T/venv.log" 2>&1
fi
if [ ! -x "$VENV/bin/kubernetes-validate" ]; then
	nok k8s_manifests_valid "kubernetes-validate could not be installed into $VENV (PyPI; python3-venv)" "$T/venv.log"
else
	NODE=gpu01 STAMP=20250112T030000Z envsubst '$NODE $STAMP' <"$K/node-sweep-job.yaml" >"$T/job.yaml"
	files=("$K"/*.yaml)
	files=("${files[@]/$K\/node-sweep-job.yaml/$T/job.yaml}")
	if "$VENV/bin/kubernetes-validate" --strict --quiet -k 1.29.0 "${files[@]}" >"$T/kv.out" 2>&1 &&
		! grep -q '\${' "$T/job.yaml"; then
		ok "k8s_manifests_valid (${#files[@]} files, Kubernetes 1.29 schemas, strict)"
	else
		nok k8s_manifests_valid "kubernetes-validate rejected a manifest, or a placeholder was left" "$T/kv.out"
	fi
	sed 's/backoffLimit: 0/backoffLimit: none/' "$T/job.yaml" >"$T/bad1.yaml"
	sed 's/^      restartPolicy: Never/      restartPolicy: Never\n      hostnam: x/' "$T/job.yaml" >"$T/bad2.yaml"
	if ! "$VENV/bin/kubernetes-validate" --strict --quiet -k 1.29.0 "$T/bad1.yaml" >/dev/null 2>&1 &&
		! "$VENV/bin/kubernetes-validate" --strict --quiet -k 1.29.0 "$T/bad2.yaml" >/dev/null 2>&1; then
		ok k8s_manifests_validation_fails_on_a_wrong_entry
	else
		nok k8s_manifests_validation_fails_on_a_wrong_entry "a string backoffLimit or an unknown field passed"
	fi
fi

# the least privileges the manifests claim
if ! grep -qE 'privileged: true|hostNetwork|hostPID|hostIPC|hostPath|allowPrivilegeEscalation: true' "$K"/*.yaml &&
	[ "$(cat "$K"/*.yaml | grep -c 'drop: \["ALL"\]')" = "$(cat "$K"/*.yaml | grep -c ' image: ')" ] &&
	[ "$(cat "$K"/*.yaml | grep -c 'readOnlyRootFilesystem: true')" = "$(cat "$K"/*.yaml | grep -c ' image: ')" ] &&
	grep -q 'automountServiceAccountToken: false' "$K/node-sweep-job.yaml" &&
	grep -qx '    verbs: \["get", "list", "patch"\]' "$K/rbac.yaml"; then
	ok k8s_least_privilege
else
	nok k8s_least_privilege "a privileged or host-namespace setting, a host path, a container keeping capabilities or a writable root, or more RBAC than get/list/patch on nodes"
fi

# ---- node-problem-detector: the plugin config and the wrapper
msg=$("$PY" - "$K/npd/clusterhealth-plugin.json" <<'PY'
import json, os, sys
c = json.load(open(sys.argv[1]))
conds = {x["type"] for x in c["conditions"]}
errs = []
if c.get("plugin") != "custom": errs.append("plugin is not custom")
for r in c["rules"]:
    if r["condition"] not in conds: errs.append("rule condition %s not among the conditions" % r["condition"])
    if r["type"] != "permanent": errs.append("rule type %s" % r["type"])
    rel = os.path.relpath(r["path"], "/opt/clusterhealth")
    if not os.access(rel, os.X_OK): errs.append("rule path %s: %s is not executable here" % (r["path"], rel))
to = c["pluginConfig"]["timeout"]
if not to.endswith("s") or int(to[:-1]) > 60: errs.append("timeout %s above 60s" % to)
print("; ".join(errs) or "OK")
PY
)
[ "$msg" = OK ] && ok k8s_npd_plugin_config || nok k8s_npd_plugin_config "$msg"

GATE=$K/npd/clusterhealth-gate
mkdir -p "$T/gates"
standin() { # NAME EXIT OUTPUT: a stand-in gate
	printf '#!/bin/bash\nprintf %%b %q\nexit %s\n' "$3" "$2" >"$T/gates/$1"
	chmod +x "$T/gates/$1"
}
standin pass 0 'checks: 31 passed\nOK: clusterhealth: 8 GPUs, 8 NICs, no fault\n'
standin fail 1 'checks: 30 passed, 1 failed\nERROR: clusterhealth: gpu3 Xid 79 (fallen off the bus) at 02:14:07: drain\nmore detail\n'
standin unavail 3 'clusterhealth: NVML unavailable: libnvidia-ml.so.1 not found\n'
standin silent 1 ''
standin hostile 1 "ERROR: clusterhealth: gpu\\033[31m3\\r\\tforged\\nrm -rf /$(printf 'x%.0s' $(seq 300))\\n"
good=1 why=
expect_gate() { # NAME WANT_EXIT WANT_REGEX
	local out rc
	out=$(CLUSTERHEALTH_GATE=$T/gates/$1 "$GATE" 2>&1); rc=$?
	if [ $rc != "$2" ] || [ "$(printf '%s\n' "$out" | wc -l)" != 1 ] || [ ${#out} -gt 160 ] ||
		! grep -qE -- "$3" <<<"$out" || LC_ALL=C grep -q '[[:cntrl:]]' <<<"$out"; then
		good=0; why="$why; $1: exit $rc (want $2), output '$out'"
	fi
}
expect_gate pass 0 '^OK: clusterhealth: 8 GPUs'
expect_gate fail 1 '^ERROR: clusterhealth: gpu3 Xid 79 \(fallen off the bus\) at 02:14:07: drain$'
expect_gate unavail 2 '^clusterhealth gate exit 3 \(unknown\): clusterhealth: NVML unavailable'
expect_gate silent 1 'a problem \(exit 1, no output\)'
expect_gate hostile 1 '^ERROR: clusterhealth: gpu.\[31m3'
expect_gate missing 2 "not found or not executable"
[ $good = 1 ] && ok k8s_npd_plugin_protocol || nok k8s_npd_plugin_protocol "${why#; }"
if [ -x scripts/healthcheck ]; then
	out=$(CH_GATE_DIR=$T/gate-out timeout 120 "$GATE" 2>&1); rc=$?
	if [ $rc -le 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ]; then
		ok "k8s_npd_plugin_real_gate (scripts/healthcheck here: exit $rc, '$out')"
	else
		nok k8s_npd_plugin_real_gate "exit $rc, output '$out'"
	fi
else
	echo "skip k8s_npd_plugin_real_gate: scripts/healthcheck is not in this tree"
fi

# ---- node labels and taints from a fleet report
if [ ! -x "$HR" ]; then
	echo "skip k8s_node_verdicts: $HR is not built"
	exit 0
fi
"$HR" -q --out "$T/rep" tests/data/report/fleet-inventory >/dev/null 2>&1
mkdir -p "$T/bin"
cat >"$T/bin/kubectl" <<'EOF'
#!/bin/bash
# kubectl stand-in: logs its arguments (one line, tab-separated), answers
# 'get nodes -o json' from $KUBECTL_NODES, fails the verbs in $KUBECTL_FAIL
(IFS=$'\t'; echo "$*") >>"$KUBECTL_LOG"
[ "$1 $2" = "get nodes" ] && exec cat "$KUBECTL_NODES"
case " ${KUBECTL_FAIL:-} " in *" $1 "*) echo "error: the server refused $1" >&2; exit 1 ;; esac
exit 0
EOF
chmod +x "$T/bin/kubectl"
# the cluster: node01 (WARN now) tainted and labelled by clusterhealth before;
# node03 (FAIL, not confirmed) tainted by clusterhealth before; node04 with
# another's taint and label; node05 (drain candidate) labelled, not tainted;
# node06 missing from the cluster; node07 not in the report
"$PY" - >"$T/nodes.json" <<'PY'
import json
ours = {"key": "clusterhealth.io/verdict", "value": "fail", "effect": "NoSchedule"}
def node(name, labels=None, ann=None, taints=None, unsched=False):
    spec = {"taints": taints} if taints else {}
    if unsched: spec["unschedulable"] = True
    return {"metadata": {"name": name, "labels": dict({"kubernetes.io/hostname": name}, **(labels or {})),
                         "annotations": ann or {}}, "spec": spec}
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
    node("node01", {"clusterhealth.io/verdict": "fail"}, {"clusterhealth.io/reason": "clusterhealth: old"}, [ours]),
    node("node02"),
    node("node03", {"clusterhealth.io/verdict": "fail"}, {}, [ours]),
    node("node04", {"team": "ml"}, {}, [{"key": "nvidia.com/gpu.unhealthy", "effect": "NoSchedule"}], True),
    node("node05", {"clusterhealth.io/verdict": "fail"}),
    node("node07")]}))
PY
export KUBECTL_NODES=$T/nodes.json
PATH=$T/bin:$PATH KUBECTL_LOG=$T/dry.log scripts/k8s-node-verdicts "$T/rep/profile.json" >"$T/dry.out" 2>&1; rc=$?
want=$(cat <<'EOF'
kubectl label node node02 clusterhealth.io/verdict=fail --overwrite
kubectl annotate node node02 'clusterhealth.io/reason=clusterhealth: nic_port_down:
kubectl taint node node02 clusterhealth.io/verdict=fail:NoSchedule --overwrite
kubectl annotate node node05 'clusterhealth.io/reason=clusterhealth: row_remap:
kubectl taint node node05 clusterhealth.io/verdict=fail:NoSchedule --overwrite
kubectl taint node node01 clusterhealth.io/verdict:NoSchedule-
kubectl label node node01 clusterhealth.io/verdict-
kubectl annotate node node01 clusterhealth.io/reason-
EOF
)
got=$(grep '^kubectl ' "$T/dry.out" | sed -E "s/^(kubectl annotate node node0[25] 'clusterhealth.io\/reason=clusterhealth: [a-z_]+:).*/\1/")
if [ $rc = 0 ] && [ "$got" = "$want" ] && [ "$(cat "$T/dry.log")" = "get	nodes	-o	json" ] &&
	grep -qx '# node03: FAIL not confirmed: left as it is (re-run it before draining)' "$T/dry.out" &&
	grep -qx '# node06: in the report, not a node of the cluster: skipped' "$T/dry.out" &&
	grep -qx '# printed only; run with --apply' "$T/dry.out"; then
	ok k8s_node_verdicts_printed_not_run
else
	diff <(echo "$want") <(echo "$got") >>"$T/dry.out"
	nok k8s_node_verdicts_printed_not_run "exit $rc; the commands (or kubectl's calls: $(tr '\n\t' '; ' <"$T/dry.log")) differ" "$T/dry.out"
fi
PATH=$T/bin:$PATH KUBECTL_LOG=$T/apply.log scripts/k8s-node-verdicts --apply "$T/rep/profile.json" >"$T/apply.out" 2>&1; rc=$?
ran=$(grep -v '^get' "$T/apply.log" | sed -E 's/^(annotate	node	node0[25]	clusterhealth.io\/reason=clusterhealth: [a-z_]+:).*/\1/' | tr '\t' ' ' | sed 's/^/kubectl /')
want_ran=$(echo "$want" | tr -d "'")
if [ $rc = 0 ] && [ "$ran" = "$want_ran" ] && ! grep -qE 'node0[3467]' <(grep -v '^get' "$T/apply.log"); then
	ok "k8s_node_verdicts_apply (only its own label, annotation and taint; $(grep -vc '^get' "$T/apply.log") commands)"
else
	nok k8s_node_verdicts_apply "exit $rc; kubectl ran: $(grep -v '^get' "$T/apply.log" | tr '\n\t' '; ')" "$T/apply.out"
fi
# a second night after the first applied: the cluster as it left it, node02 passes now
"$PY" - "$T/rep/profile.json" "$T/pass.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for n in d["nodes"]:
    if n["name"] == "node02":
        n["verdict"], n["drain_candidate"] = "PASS", False
json.dump(d, open(sys.argv[2], "w"))
PY
"$PY" - "$T/nodes.json" >"$T/nodes2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for n in d["items"]:
    if n["metadata"]["name"] == "node02":
        n["metadata"]["labels"]["clusterhealth.io/verdict"] = "fail"
        n["metadata"]["annotations"]["clusterhealth.io/reason"] = "clusterhealth: nic_port_down: ..."
        n["spec"]["taints"] = [{"key": "clusterhealth.io/verdict", "value": "fail", "effect": "NoSchedule"},
                               {"key": "other.io/maintenance", "effect": "NoExecute"}]
print(json.dumps(d))
PY
out=$(PATH=$T/bin:$PATH KUBECTL_NODES=$T/nodes2.json KUBECTL_LOG=$T/pass.log scripts/k8s-node-verdicts "$T/pass.json" 2>&1)
if grep -qx 'kubectl taint node node02 clusterhealth.io/verdict:NoSchedule-' <<<"$out" &&
	grep -qx 'kubectl label node node02 clusterhealth.io/verdict-' <<<"$out" &&
	grep -qx 'kubectl annotate node node02 clusterhealth.io/reason-' <<<"$out" && ! grep -q 'other.io' <<<"$out"; then
	ok k8s_node_verdicts_undone_when_it_passes
else
	nok k8s_node_verdicts_undone_when_it_passes "output: $(tr '\n' ';' <<<"$out")"
fi
# bad input: a node name that is not a Kubernetes name, not a profile, a kubectl that fails
"$PY" - "$T/rep/profile.json" "$T/hostile.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["nodes"][0]["name"] = "node02; kubectl delete node node03"
json.dump(d, open(sys.argv[2], "w"))
PY
PATH=$T/bin:$PATH KUBECTL_LOG=$T/h.log scripts/k8s-node-verdicts --apply "$T/hostile.json" >"$T/h.out" 2>&1; rc1=$?
PATH=$T/bin:$PATH KUBECTL_LOG=$T/h.log scripts/k8s-node-verdicts "$T/nodes.json" >"$T/h2.out" 2>&1; rc2=$?
PATH=$T/bin:$PATH KUBECTL_LOG=$T/h3.log KUBECTL_FAIL=taint scripts/k8s-node-verdicts --apply "$T/rep/profile.json" >"$T/h3.out" 2>&1; rc3=$?
if [ $rc1 = 2 ] && grep -q "node02; kubectl delete node node03" "$T/h.out" && grep -q "refused" "$T/h.out" &&
	! grep -qv '^get' "$T/h.log" && [ $rc2 = 2 ] && grep -q "not a fleet report" "$T/h2.out" &&
	[ $rc3 = 4 ] && grep -q "the server refused taint" "$T/h3.out" && grep -q '^label' "$T/h3.log"; then
	ok k8s_node_verdicts_bad_input
else
	nok k8s_node_verdicts_bad_input "exits $rc1 $rc2 $rc3 (want 2 2 4)" "$T/h.out"
fi
# no cluster: kubectl missing, or kubectl that reaches no server: named, exit 4
printf '#!/bin/sh\necho "The connection to the server localhost:8080 was refused - did you specify the right host or port?" >&2\nexit 1\n' >"$T/nocluster-kubectl"
chmod +x "$T/nocluster-kubectl"
scripts/k8s-node-verdicts --kubectl "$T/no-such-kubectl" "$T/rep/profile.json" >"$T/nc1.out" 2>&1; rc1=$?
scripts/k8s-node-verdicts --kubectl "$T/nocluster-kubectl" "$T/rep/profile.json" >"$T/nc2.out" 2>&1; rc2=$?
if [ $rc1 = 4 ] && grep -q "cannot run .*install kubectl or give --kubectl" "$T/nc1.out" &&
	[ $rc2 = 4 ] && grep -q "no cluster's node list: .*connection to the server localhost:8080 was refused.*check kubectl's context" "$T/nc2.out"; then
	ok k8s_node_verdicts_no_cluster_named
else
	nok k8s_node_verdicts_no_cluster_named "exits $rc1 $rc2 (want 4 4)" "$T/nc2.out"
fi
exit 0
