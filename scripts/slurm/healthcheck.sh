#!/bin/bash
# healthcheck.sh - scripts/healthcheck as Slurm's HealthCheckProgram, Prolog
# or Epilog (slurm.conf takes a path without arguments): runs it with
# --slurm --quiet and the options of the configuration file
# $CH_GATE_CONF (default /etc/clusterhealth/gate.conf), one option a line,
# its value after a blank ("--budget 45", "--out /var/lib/clusterhealth/gate",
# "--xid-table /etc/clusterhealth/xid.tsv"); '#' starts a comment. The
# file is read, never run. Method: docs/workflows.md, "The gate".
#
# slurm.conf:
#   HealthCheckProgram=/opt/clusterhealth/scripts/slurm/healthcheck.sh
#   HealthCheckInterval=300
#   HealthCheckNodeState=ANY,CYCLE
#   Prolog=/opt/clusterhealth/scripts/slurm/healthcheck.sh
conf=${CH_GATE_CONF:-/etc/clusterhealth/gate.conf}
args=(--slurm --quiet)
if [ -r "$conf" ]; then
	while read -r opt val; do
		case "$opt" in '' | '#'*) continue ;; esac
		args+=("$opt")
		[ -n "$val" ] && args+=("$val")
	done <"$conf"
fi
exec "$(dirname "$0")/../healthcheck" "${args[@]}"
