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
# A CH_GATE_CONF that names no readable file, or a default file that exists
# but cannot be read, is an error (exit 2), never the defaults run in its
# place; without CH_GATE_CONF and without the default file the gate runs
# with its defaults. The last line counts without a newline.
conf=${CH_GATE_CONF:-/etc/clusterhealth/gate.conf}
args=(--slurm --quiet)
if [ -n "${CH_GATE_CONF:-}" ] || [ -e "$conf" ]; then
	if [ ! -f "$conf" ] || [ ! -r "$conf" ]; then
		echo "healthcheck.sh: error: cannot read the gate's configuration '$conf' (CH_GATE_CONF; a readable file, one option a line)" >&2
		exit 2
	fi
	while read -r opt val || [ -n "$opt" ]; do
		case "$opt" in '' | '#'*) continue ;; esac
		args+=("$opt")
		[ -n "$val" ] && args+=("$val")
	done <"$conf"
fi
exec "$(dirname "$0")/../healthcheck" "${args[@]}"
