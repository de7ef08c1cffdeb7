#!/bin/bash
# roofline: the CUDA backend in the default build, "unavailable" without a
# GPU (exit 3, result file saying so), auto and mixed backends, the result
# envelope. Prints ok / not ok / skip lines (scripts/run-tests).
cd "$(dirname "$0")/../.."
source scripts/test-env
R=$B/roofline
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# jq-like field access with python3: jget FILE EXPR (EXPR on the parsed doc d)
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then have_gpu=1; fi

# 1. the CUDA backend is compiled into the default build when the toolkit exists
if [ "${WITH_CUDA:-auto}" = no ]; then
	echo "skip roofline cuda backend compiled in the default build: this build was made with WITH_CUDA=no"
elif [ -x /usr/local/cuda/bin/nvcc ] || [ -n "${CUDA_HOME:-}" -a -x "${CUDA_HOME:-/nonexistent}/bin/nvcc" ]; then
	if nm "$B/libclusterhealth.a" 2>/dev/null | grep -q ' T ch_cu_ladder' &&
	   nm "$B/libclusterhealth.a" 2>/dev/null | grep -q ' R ch_backend_cuda\| D ch_backend_cuda'; then
		echo "ok roofline cuda backend compiled in the default build"
	else
		echo "not ok roofline cuda backend compiled in the default build: ch_cu_ladder or ch_backend_cuda missing from $B/libclusterhealth.a"
	fi
else
	echo "skip roofline cuda backend compiled in the default build: no CUDA toolkit here"
fi

# 2. --backend cuda without a GPU: exit 3 and a result file that says why
if [ $have_gpu = 1 ]; then
	echo "skip roofline cuda unavailable without a GPU: a GPU is present"
else
	$R --backend cuda --json "$tmp/cuda.json" >"$tmp/cuda.out" 2>&1
	rc=$?
	if [ $rc = 3 ] && [ "$(jget "$tmp/cuda.json" "d['status'], d['exit_code'], d['results']['devices'][0]['status'], bool(d['reason'])")" = "unavailable 3 unavailable True" ]; then
		echo "ok roofline cuda unavailable without a GPU (exit 3, result file says so)"
	else
		echo "not ok roofline cuda unavailable without a GPU: exit $rc, $(head -c 300 "$tmp/cuda.out")"
	fi
fi

# 3. auto picks the CPU without a GPU
if [ $have_gpu = 1 ]; then
	echo "skip roofline auto picks cpu without a GPU: a GPU is present"
else
	$R --size 1M --kernels triad --iters 2 --json "$tmp/auto.json" >/dev/null 2>&1
	rc=$?
	got=$(jget "$tmp/auto.json" "d['results']['backend_auto'], d['results']['devices'][0]['device'], d['status']" 2>&1)
	if [ $rc = 0 ] && [ "$got" = "cpu cpu ok" ]; then
		echo "ok roofline auto picks cpu without a GPU"
	else
		echo "not ok roofline auto picks cpu without a GPU: exit $rc, $got"
	fi
fi

# 4. --backend cpu,cuda without a GPU: the CPU is measured, the run says unavailable
if [ $have_gpu = 1 ]; then
	echo "skip roofline cpu,cuda without a GPU: a GPU is present"
else
	$R --backend cpu,cuda --size 1M --kernels triad --iters 2 --json "$tmp/both.json" >/dev/null 2>&1
	rc=$?
	got=$(jget "$tmp/both.json" "' '.join(x['device'] + ':' + x['status'] for x in d['results']['devices']), d['status']" 2>&1)
	if [ $rc = 3 ] && [ "$got" = "gpu:unavailable cpu:ok unavailable" ]; then
		echo "ok roofline cpu,cuda without a GPU measures the cpu and exits 3"
	else
		echo "not ok roofline cpu,cuda without a GPU: exit $rc, $got"
	fi
fi

# 5. the envelope carries the run's energy (n/a here) and the BLAS version
$R --backend cpu --size 1M --kernels triad --iters 2 --json "$tmp/env.json" >/dev/null 2>&1
got=$(jget "$tmp/env.json" "sorted(d['energy']), d['energy']['source'] in ('rapl','nvml','rapl+nvml','unavailable'), bool(d['software']['blas'])" 2>&1)
if [ "$got" = "['cpu_j', 'gpu_j', 'source', 'wall_sec'] True True" ]; then
	echo "ok roofline envelope has energy and blas"
else
	echo "not ok roofline envelope has energy and blas: $got"
fi

# 6. an invalid point: status failed in the file, its numbers null
CH_ROOFLINE_CORRUPT=copy $R --backend cpu --size 1M --kernels copy,triad --iters 2 --json "$tmp/bad.json" >/dev/null 2>&1
rc=$?
got=$(jget "$tmp/bad.json" "d['status'], [(p['kernel'], p['valid'], p['gbps']) for p in d['results']['devices'][0]['points']]" 2>&1)
if [ $rc = 1 ] && [ "$got" = "failed [('copy', False, None), ('triad', True, $(jget "$tmp/bad.json" "d['results']['devices'][0]['points'][1]['gbps']"))]" ]; then
	echo "ok roofline invalid point recorded as failed with null numbers"
else
	echo "not ok roofline invalid point recorded as failed: exit $rc, $got"
fi
# 7. OpenMP's binding policy does not shrink the CPU run to one core: with
# OMP_PROC_BIND set, libgomp binds the initial thread to its first place
# before main(); the cores are the places together (threads = the cores
# hwloc sees, BLAS threads too), and taskset still restricts them
cores=$(hwloc-calc --number-of core machine:0 2>/dev/null || nproc)
if [ "$cores" -lt 2 ]; then
	echo "skip roofline OMP_PROC_BIND keeps every core: one core here"
else
	OMP_PROC_BIND=close OMP_PLACES=cores $R --backend cpu --size 1M --kernels triad --iters 2 --json "$tmp/omp.json" >/dev/null 2>&1
	got=$(jget "$tmp/omp.json" "' '.join(str(x) for x in (lambda c: (c['units'], c['threads'], c['blas'].split(', ')[-1]))(d['results']['devices'][0]['config']))" 2>&1)
	OMP_PROC_BIND=close OMP_PLACES=cores taskset -c 0 $R --backend cpu --size 1M --kernels triad --iters 2 --json "$tmp/omp1.json" >/dev/null 2>&1
	got1=$(jget "$tmp/omp1.json" "' '.join(str(x) for x in (lambda c: (c['units'], c['threads']))(d['results']['devices'][0]['config']))" 2>&1)
	if [ "$got" = "$cores $cores $cores threads" ] && [ "$got1" = "1 1" ]; then
		echo "ok roofline OMP_PROC_BIND keeps every core (and taskset still restricts)"
	else
		echo "not ok roofline OMP_PROC_BIND keeps every core: with OMP_PROC_BIND=close OMP_PLACES=cores: '$got' (want '$cores $cores $cores threads'); under taskset -c 0: '$got1' (want '1 1')"
	fi
fi
exit 0
