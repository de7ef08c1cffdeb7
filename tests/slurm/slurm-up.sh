# slurm-up.sh - sourced by the tests that talk to a real Slurm: a munged, a
# slurmctld and a slurmd of Debian's slurm-wlm started on loopback from a
# generated slurm.conf, every state, spool, log, socket and PID file under
# $SL (a folder of the test's temporary directory), stopped by PID.
#
#   slurm_up DIR [slurm.conf lines...]   start them; 0 up, 1 failed (why in
#                                        $slurm_why), 2 not installed
#   slurm_down                           stop them (by the PIDs recorded)
#   slurm_conf_add LINE... ; slurm_reconfigure   change slurm.conf, reread it
#
# The one node is this host (NodeName = hostname -s, NodeAddr 127.0.0.1),
# with 8 CPUs and 8 GPUs as configured (SlurmdParameters=config_overrides;
# the GPUs are GRES counts over device files of the test's own, none a GPU),
# in partition "ch"; Slurm's commands
# find the configuration through SLURM_CONF (exported) and munge through the
# socket named in it.
slurm_pids=()
slurm_why=
slurm_port() { # a free TCP port on loopback
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
slurm_up() {
	SL=$1; shift
	local b
	for b in munged mungekey slurmctld slurmd sbatch scontrol sinfo; do
		command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] || { slurm_why="$b is not installed (Debian packages slurm-wlm and munge: scripts/install-deps --test)"; return 2; }
	done
	mkdir -p "$SL"/{munge,state,spool,log,run} || { slurm_why="cannot create $SL"; return 1; }
	chmod 700 "$SL/munge"
	# munge: its own key and socket
	/usr/sbin/mungekey -c -f -k "$SL/munge/munge.key" >/dev/null 2>&1 ||
		dd if=/dev/urandom of="$SL/munge/munge.key" bs=1024 count=1 2>/dev/null
	chmod 400 "$SL/munge/munge.key"
	/usr/sbin/munged --force --key-file="$SL/munge/munge.key" --socket="$SL/munge/munge.sock" \
		--pid-file="$SL/munge/munged.pid" --log-file="$SL/log/munged.log" --seed-file="$SL/munge/seed" \
		2>"$SL/log/munged.err" || { slurm_why="munged did not start: $(tail -1 "$SL/log/munged.err")"; return 1; }
	slurm_pids+=("$(cat "$SL/munge/munged.pid")")
	local cport dport host cpus mem
	cport=$(slurm_port); dport=$(slurm_port)
	host=$(hostname -s 2>/dev/null || hostname)
	cpus=$(nproc); mem=$(awk '/MemTotal/ {print int($2/1024*0.8)}' /proc/meminfo)
	SLURM_HOST=$host
	cat >"$SL/slurm.conf" <<CONF
ClusterName=chtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$cport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SL/munge/munge.sock
StateSaveLocation=$SL/state
SlurmdSpoolDir=$SL/spool
SlurmctldPidFile=$SL/run/slurmctld.pid
SlurmdPidFile=$SL/run/slurmd.pid
SlurmctldLogFile=$SL/log/slurmctld.log
SlurmdLogFile=$SL/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=pmix
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
SchedulerParameters=sched_interval=1
GresTypes=gpu
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 RealMemory=$mem Gres=gpu:8 State=UNKNOWN
PartitionName=ch Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
	local l
	for l in "$@"; do echo "$l" >>"$SL/slurm.conf"; done
	# 8 "GPUs" without devices: GRES counts only, so that jobs asking for
	# --gpus-per-node=8 (scripts/slurm/sweep.sbatch) are scheduled here
	mkdir -p "$SL/dev"
	# device files for the GRES: character devices like /dev/null's (root),
	# else plain files (slurmd logs an error for each and goes on)
	for l in 0 1 2 3 4 5 6 7; do mknod "$SL/dev/nvidia$l" c 1 3 2>/dev/null || : >"$SL/dev/nvidia$l"; done
	echo "NodeName=$host Name=gpu File=$SL/dev/nvidia[0-7]" >"$SL/gres.conf"
	export SLURM_CONF=$SL/slurm.conf
	/usr/sbin/slurmctld -i -f "$SLURM_CONF" >"$SL/log/slurmctld.out" 2>&1 || { slurm_why="slurmctld did not start: $(tail -2 "$SL/log/slurmctld.log" "$SL/log/slurmctld.out" 2>/dev/null | tr '\n' ' ')"; return 1; }
	local i
	for i in $(seq 50); do [ -s "$SL/run/slurmctld.pid" ] && break; sleep 0.2; done
	[ -s "$SL/run/slurmctld.pid" ] && slurm_pids+=("$(cat "$SL/run/slurmctld.pid")")
	/usr/sbin/slurmd -f "$SLURM_CONF" -N "$host" >"$SL/log/slurmd.out" 2>&1 || { slurm_why="slurmd did not start: $(tail -2 "$SL/log/slurmd.log" "$SL/log/slurmd.out" 2>/dev/null | tr '\n' ' ')"; return 1; }
	for i in $(seq 50); do [ -s "$SL/run/slurmd.pid" ] && break; sleep 0.2; done
	[ -s "$SL/run/slurmd.pid" ] && slurm_pids+=("$(cat "$SL/run/slurmd.pid")")
	# the node idle within 30 s
	for i in $(seq 150); do
		case $(sinfo -h -n "$host" -o %t 2>/dev/null) in idle*|mix*|alloc*) return 0 ;; esac
		sleep 0.2
	done
	slurm_why="the node did not come up idle in 30 s (sinfo: $(sinfo -h -o '%t %E' 2>&1 | head -1); $SL/log)"
	return 1
}
slurm_reconfigure() { scontrol reconfigure >/dev/null 2>&1; }
slurm_down() {
	local p i
	# slurmd, slurmctld, munged: newest first
	for ((i = ${#slurm_pids[@]} - 1; i >= 0; i--)); do
		p=${slurm_pids[$i]}
		kill "$p" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
	done
	slurm_pids=()
}
