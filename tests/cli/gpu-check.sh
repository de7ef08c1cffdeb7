#!/bin/bash
# gpu-check.sh - scripts/gpu-check on this GPU-less machine.
#
#  1. the closing summary on a synthetic H200 run (tests/data/gpu-check/h200):
#     exact ratios to the datasheet and to the same-run cuBLAS reference, the
#     record row, and the exit code for a failed bound, a pass, a crash and
#     a machine without GPU;
#  2. usage errors exit 2;
#  3. a bundle from the current build (--no-build: never rebuilds, so it
#     also works after `make SANITIZE=1`): packed size under its bound, no
#     CUDA, cuBLAS or NCCL library inside, every built binary and the
#     libraries it needs inside;
#  4. --run from that bundle reports every GPU path unavailable, exit 3 -
#     inside a private mount namespace where the system's copies of every
#     bundled library, Open MPI's, PMIx's and PLplot's folders and ssh are
#     hidden (as on the GPU machine), when this machine lets us make one;
#  ... 8. a bundle whose binary needs a libcudart found nowhere: exit 4
#     before any step, naming the library, where it looked and the fix.
# Skips with a reason when no binary is built or there is no CUDA toolkit.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
B=${B:-build}
T=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-test.XXXXXX")
trap 'rm -rf "$T"' EXIT

# ---------------------------------------------------------------- 1. summary
fixture() { rm -rf "$T/fx"; cp -r tests/data/gpu-check/h200 "$T/fx"; }
fixture
out=$(scripts/gpu-check-summary "$T/fx"); rc=$?
check "gpu-check summary: fp8 GEMM below (0.95 - spread) x the cuBLASLt reference exits 1" [ $rc -eq 1 ]
check "gpu-check summary: triad 86.5% of the H200 datasheet, 1.038 x cudaMemcpy" \
	grep -qE '^gpu0 +triad bandwidth +4150\.0 +GB/s +86\.5 +1\.038 +cudaMemcpy D2D 4000\.0 \(4000\.0 / 4000\.0\)$' <<<"$out"
check "gpu-check summary: bf16 GEMM 79.8% of datasheet, 1.000 x the mean of the references before and after roofline" \
	grep -qE '^gpu0 +bf16 GEMM +790\.0 +TFLOP/s +79\.8 +1\.000 +cublasLtMatmul TN 790\.0 \(800\.0 / 780\.0\)$' <<<"$out"
check "gpu-check summary: the failed bound is named" \
	grep -qxF 'FAIL gpu0: fp8 GEMM >= 0.936 x cuBLASLt reference (0.95 less its spread 0.014) (1200.0 vs 1390.0 TFLOP/s)' <<<"$out"
check "gpu-check summary: a world of one reports algbw, not busbw" \
	grep -qF 'ring algbw 1510.5 GB/s at 1073741824 B (1 rank: a local copy, nothing reduced; busbw is 0 by definition)' <<<"$out"
check "gpu-check summary: record row for docs/gpu-validation.md" \
	grep -qF '| 2026-12-01 | NVIDIA H200 | 580.159.04 | 13.0 | 2.28.3 | FAIL: gpu0: fp8 GEMM >= 0.936 x cuBLASLt reference (0.95 less its spread 0.014) | pass | pass | pass | pass | pass |' "$T/fx/summary.md"
check "gpu-check summary: summary.json carries exit code 1" \
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["exit_code"] == 1 and len(d["ceilings"]) == 4 else 1)' "$T/fx/summary.json"

fixture
sed -i 's/^gemm\tfp8\t8192\t10\t1[34][08]0/gemm\tfp8\t8192\t10\t1250/' "$T/fx/ref.tsv" "$T/fx/ref-after.tsv"
out=$(scripts/gpu-check-summary "$T/fx"); rc=$?
check "gpu-check summary: every bound met exits 0" [ $rc -eq 0 ]
check "gpu-check summary: says PASSED" grep -qF 'gpu-check: PASSED: every path ran and passed its checks' <<<"$out"

# the reference's runs before and after roofline 1300 and 1480 TFLOP/s
# (spread 0.129): 1200 of their mean 1390 is inside 0.95 less that spread
fixture
sed -i 's/^gemm\tfp8\t8192\t10\t1380/gemm\tfp8\t8192\t10\t1480/' "$T/fx/ref-after.tsv"
sed -i 's/^gemm\tfp8\t8192\t10\t1400/gemm\tfp8\t8192\t10\t1300/' "$T/fx/ref.tsv"
out=$(scripts/gpu-check-summary "$T/fx"); rc=$?
check "gpu-check summary: a reference that drifted between its runs widens the bound by its spread" \
	bash -c '[ '$rc' -eq 0 ] && grep -qxF "PASS gpu0: fp8 GEMM >= 0.821 x cuBLASLt reference (0.95 less its spread 0.129) (1200.0 vs 1390.0 TFLOP/s)" <<<"$1"' _ "$out"

fixture
sed -i 's/^roofline\t0\t/roofline\t139\t/' "$T/fx/steps.tsv"
out=$(scripts/gpu-check-summary "$T/fx"); rc=$?
check "gpu-check summary: a crashed step exits 4 and names the signal" \
	bash -c '[ '$rc' -eq 4 ] && grep -qE "^roofline --backend cuda +killed by signal 11" <<<"$1"' _ "$out"

fixture
sed -i -e 's/^gpu_count=1/gpu_count=0/' -e '/^gpu=/d' "$T/fx/env.txt"
sed -i -E 's/^(ref|ref-after|roofline|allreduce-nccl|loader)\t0\t([0-9.]+)\trun/\1\t3\t\2\tunavailable/' "$T/fx/steps.tsv"
out=$(scripts/gpu-check-summary "$T/fx"); rc=$?
check "gpu-check summary: no GPU, every GPU step exit 3: exits 3" [ $rc -eq 3 ]
check "gpu-check summary: no GPU: says unavailable" \
	bash -c '[ $(grep -c "unavailable (no GPU), as expected" <<<"$1") -eq 5 ] && grep -qF "UNAVAILABLE: no GPU here" <<<"$1"' _ "$out"

# ---------------------------------------------------------------- 2. usage
rc1=$(scripts/gpu-check --frobnicate >/dev/null 2>&1; echo $?)
rc2=$(scripts/gpu-check --run "$T" --out "$T/o" >"$T/u2" 2>&1; echo $?)
rc3=$(scripts/gpu-check --budget 5 --run x >/dev/null 2>&1; echo $?)
mkdir -p "$T/full" && touch "$T/full/x"
rc4=$(scripts/gpu-check --bundle "$T/full" --no-build >"$T/u4" 2>&1; echo $?)
check "gpu-check: unknown option exits 2" [ "$rc1" = 2 ]
check "gpu-check: --run on a folder that is no bundle exits 2 and says so" \
	bash -c '[ '"$rc2"' = 2 ] && grep -qF "is not a bundle" "$1"' _ "$T/u2"
check "gpu-check: --budget below 60 s exits 2" [ "$rc3" = 2 ]
check "gpu-check: --bundle into a non-empty non-bundle folder exits 2" \
	bash -c '[ '"$rc4"' = 2 ] && grep -qF "is not empty and holds no bundle" "$1"' _ "$T/u4"

# ---------------------------------------------------------------- 3. bundle
built=()
for t in roofline allreduce_bw loader_contention health_report; do [ -x "$B/$t" ] && built+=("$t"); done
if [ ${#built[@]} -eq 0 ]; then
	echo "skip gpu-check bundle and run: no binary is built in '$B' yet"
	exit 0
fi
if [ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
	echo "skip gpu-check bundle and run: no CUDA toolkit here (a GPU bundle needs CUDA built in)"
	exit 0
fi
stamp=$(stat -c %Y "$B/${built[0]}")
XZ_OPT="-0 -T0" scripts/gpu-check --bundle "$T/bundle" --no-build --build-dir "$B" >"$T/bundle.log" 2>&1; rc=$?
check "gpu-check --bundle: exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || sed 's/^/    /' "$T/bundle.log" | tail -20
check "gpu-check --bundle: prints its size" grep -qE "^gpu-check: bundle '.*': [0-9.]+ MiB packed, [0-9.]+ MiB unpacked" "$T/bundle.log"
check "gpu-check --bundle: the build was not redone" [ "$(stat -c %Y "$B/${built[0]}")" = "$stamp" ]
size=$(du -sb "$T/bundle" | cut -f1)
check "gpu-check --bundle: $((size / 1048576)) MiB, under 48 MiB" [ "$size" -lt $((48 * 1048576)) ]
tar -tJf "$T/bundle/clusterhealth-bundle.tar.xz" >"$T/list" 2>/dev/null
check "gpu-check --bundle: no CUDA, cuBLAS, NCCL or NVML library inside" \
	bash -c '! grep -E "/lib(cuda|cudart|cublas|cublasLt|nccl|nvidia-ml)[.-]" "$1"' _ "$T/list"
for t in "${built[@]}"; do
	check "gpu-check --bundle: holds $t" grep -qx "./bin/$t" "$T/list"
done
need=$(for t in "${built[@]}"; do ldd "$B/$t"; done | awk '$3 ~ /^\// { print $1 }' | sort -u |
	grep -vE '^(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux)[.-]|^lib(cuda|cudart|cublas|cublasLt|nccl|nvidia-)[.-]')
miss=$(for l in $need; do grep -qx "./lib/$l" "$T/list" || echo "$l"; done)
check "gpu-check --bundle: holds every library the binaries need (missing: ${miss:-none})" [ -z "$miss" ]
if grep -q '^libmpi' <<<"$need"; then
	check "gpu-check --bundle: holds mpirun, orted and Open MPI's plugins" \
		bash -c 'grep -q "^./openmpi/bin/orted$" "$1" && grep -q "^./openmpi/bin/mpirun$" "$1" && grep -q "/openmpi3/mca_btl_vader.so$" "$1"' _ "$T/list"
fi

# ---------------------------------------------------------------- 4. run
mkdir -p "$T/u" && tar -C "$T/u" -xJf "$T/bundle/clusterhealth-bundle.tar.xz"
cat >"$T/hide.sh" <<'EOF'
# hide this machine's copies of what the bundle carries, as on the GPU machine
b=$1; shift
for l in $(cd "$b/lib" && ls | grep -v '^fallback$'); do
	for p in $(ldconfig -p | awk -v l="$l" '$1 == l { print $NF }'); do
		mount --bind /dev/null "$(readlink -f "$p")" || exit 90
	done
done
for d in $(ompi_info --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p') \
	$(ompi_info --path pkgdatadir --parsable 2>/dev/null | sed -n 's/^path:pkgdatadir://p') \
	/usr/lib/x86_64-linux-gnu/pmix2 /etc/openmpi $(ls -d /usr/lib/*/plplot*/drivers /usr/share/plplot* 2>/dev/null); do
	[ -d "$d" ] && { mount -t tmpfs none "$d" || exit 90; }
done
for f in ssh orterun orted; do
	p=$(command -v $f) && { mount --bind /dev/null "$(readlink -f "$p")" || exit 90; }
done
"$@"
EOF
sandbox=()
if unshare -m --propagation private true 2>/dev/null; then
	sandbox=(unshare -m --propagation private bash "$T/hide.sh" "$T/u")
else
	echo "skip gpu-check --run with the system's libraries hidden: cannot make a private mount namespace here (runs with them visible)"
fi
"${sandbox[@]}" scripts/gpu-check --run "$T/bundle" --out "$T/out" >"$T/run.log" 2>&1; rc=$?
check "gpu-check --run without a GPU: exits 3" [ $rc -eq 3 ]
[ $rc -eq 3 ] || sed 's/^/    /' "$T/run.log" | tail -30
check "gpu-check --run without a GPU: a clear message" grep -qF "every GPU path is unavailable" "$T/run.log"
for s in roofline allreduce-nccl loader; do
	if awk -F'\t' -v s="$s" '$1 == s && $2 != "notbuilt"' "$T/out/steps.tsv" | grep -q .; then
		check "gpu-check --run without a GPU: $s exits 3 (unavailable)" \
			awk -F'\t' -v s="$s" '$1 == s && $2 == 3 { f = 1 } END { exit !f }' "$T/out/steps.tsv"
	else
		check "gpu-check --run without a GPU: $s reported as not built" grep -qE "^[a-z_ ]*${s%%-*}.* +not built" "$T/out/summary.txt"
	fi
done
check "gpu-check --run without a GPU: the cuBLAS reference says unavailable" grep -qE '^cuBLASLt reference .* unavailable \(no GPU\), as expected' "$T/out/summary.txt"
if [ -x "$B/allreduce_bw" ]; then
	check "gpu-check --run: the mpi backend ran from the bundle (exit 0)" \
		awk -F'\t' '$1 == "allreduce-mpi" && $2 == 0 { f = 1 } END { exit !f }' "$T/out/steps.tsv"
fi
if [ -x "$B/health_report" ]; then
	check "gpu-check --run: health_report ran from the bundle" \
		awk -F'\t' '$1 == "report" && ($2 == 0 || $2 == 1) { f = 1 } END { exit !f }' "$T/out/steps.tsv"
	# in the output folder (--out), never in the directory it was started from
	check "gpu-check --run: health_report's outputs in the output folder's report/" \
		bash -c 'for f in profile.json report.md report.html health.prom; do [ -s "$1/report/$f" ] || exit 1; done' _ "$T/out"
fi
check "gpu-check --run: summary, env and logs written" \
	bash -c 'for f in summary.txt summary.md summary.json env.txt steps.tsv logs/ldd.log; do [ -s "$1/$f" ] || exit 1; done' _ "$T/out"
check "gpu-check --run: one tarball of the output folder" \
	bash -c 'tar -tzf "$1.tar.gz" | grep -qx "out/summary.txt"' _ "$T/out"
check "gpu-check --run: no library left unresolved" bash -c '! grep -q "not found" "$1/logs/ldd.log"' _ "$T/out"

# ---------------------------------------------------------------- 5. GPU listed, none usable
# nvidia-smi says there is a GPU (a stand-in), CUDA finds none: the GPU
# steps run as on a GPU machine, and their exit 3 is then a breakage (4).
mkdir -p "$T/fakebin"
cat >"$T/fakebin/nvidia-smi" <<'EOF'
#!/bin/sh
case "$*" in
*--query-gpu=*compute_cap*) echo "0, NVIDIA H200, 580.159.04, 00000000:00:05.0, 143771 MiB, 9.0" ;;
*--query-gpu=*) echo "9.0" ;;
*) echo "NVIDIA-SMI stand-in for tests/cli/gpu-check.sh" ;;
esac
EOF
chmod +x "$T/fakebin/nvidia-smi"
PATH="$T/fakebin:$PATH" GPU_CHECK_MPI_ARGS="--backend mpi -b 8 -e 64K -f 8" \
	scripts/gpu-check --run "$T/bundle" --out "$T/out2" >"$T/run2.log" 2>&1; rc=$?
check "gpu-check --run, GPU listed but unusable: exits 4" [ $rc -eq 4 ]
check "gpu-check --run, GPU listed but unusable: the GPU steps are run, not skipped" \
	bash -c 'grep -qxF "gpu-check: 1 GPU(s): 1 x NVIDIA H200" "$1" && ! grep -q "every GPU path is unavailable" "$1"' _ "$T/run2.log"
if [ -x "$B/roofline" ]; then
	check "gpu-check --run, GPU listed but unusable: roofline's exit 3 is reported as a fault" \
		grep -qE '^roofline --backend cuda +unavailable \(exit 3\) although a GPU is here' "$T/out2/summary.txt"
fi
if [ -x "$B/allreduce_bw" ]; then
	check "gpu-check --run, GPU listed: nccl backend in one process driving every GPU (-g), no mpirun" \
		awk -F'\t' '$1 == "allreduce-nccl" && $5 ~ /allreduce_bw -g 1 --backend nccl/ && $5 !~ /mpirun/ { f = 1 } END { exit !f }' "$T/out2/steps.tsv"
fi
check "gpu-check --run, GPU listed: driver and GPU in the summary header" \
	grep -qE '^gpu-check .* GPUs 1 x NVIDIA H200; driver 580\.159\.04' "$T/out2/summary.txt"
if [ -x "$B/roofline" ]; then
	check "gpu-check --run, GPU listed: roofline runs one process per GPU (--devices 0, its own result file)" \
		bash -c 'grep -qE -- "--each-gpu 1 .*roofline --backend cuda" "$1/steps.tsv" && [ -s "$1/logs/roofline-gpu0.log" ] &&
			python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert \"--devices\" in d[\"args\"] and d[\"args\"][d[\"args\"].index(\"--devices\") + 1] == \"0\"" "$1/results/roofline-gpu0.json"' _ "$T/out2"
fi

# ---------------------------------------------------------------- 5b. driver of an older CUDA
# nvidia-smi's header says CUDA 12.4, the bundle was built with CUDA 13:
# the preflight stops before any step, naming both and the fix; with the
# toolkit's compat libraries (GPU_CHECK_CUDA_COMPAT) it uses them instead.
built_cuda=$(sed -n 's/^cuda_runtime_built: //p' "$T/bundle/MANIFEST.txt")
if [ -n "$built_cuda" ] && [ "${built_cuda%%.*}" -gt 12 ]; then
	mkdir -p "$T/fakebin12"
	sed 's/NVIDIA-SMI stand-in for tests\/cli\/gpu-check.sh/| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |/' \
		"$T/fakebin/nvidia-smi" >"$T/fakebin12/nvidia-smi"
	chmod +x "$T/fakebin12/nvidia-smi"
	PATH="$T/fakebin12:$PATH" GPU_CHECK_CUDA_COMPAT= scripts/gpu-check --run "$T/bundle" --out "$T/out12" >"$T/run12.log" 2>&1; rc=$?
	check "gpu-check --run, driver of CUDA 12.4 under a CUDA $built_cuda bundle: exits 4 before any step" \
		bash -c '[ '$rc' -eq 4 ] && [ ! -e "$1/steps.tsv" -o $(wc -l <"$1/steps.tsv" 2>/dev/null || echo 1) -le 1 ]' _ "$T/out12"
	check "gpu-check --run, driver of CUDA 12.4: the message names both versions and the fix" \
		bash -c 'grep -q "driver supports CUDA 12.4, but the bundle was built with CUDA '"$built_cuda"'" "$1" && grep -q "CUDA 12.x toolkit" "$1" && grep -q "cuda-compat-" "$1"' _ "$T/run12.log"
	mkdir -p "$T/compat" && : >"$T/compat/libcuda.so.1"
	PATH="$T/fakebin12:$PATH" GPU_CHECK_CUDA_COMPAT="$T/compat" GPU_CHECK_MPI_ARGS="--backend mpi -b 8 -e 64K -f 8" \
		GPU_CHECK_ROOFLINE_ARGS="--backend cuda --kernels triad --size 1M" \
		scripts/gpu-check --run "$T/bundle" --out "$T/outc" >"$T/runc.log" 2>&1
	check "gpu-check --run, driver of CUDA 12.4 with the compat libraries: uses them and runs the steps" \
		bash -c 'grep -q "using the forward-compatibility libcuda.so.1 in $2" "$1/../runc.log" && grep -qx "cuda_compat=$2" "$1/env.txt" && grep -qx "driver_cuda=12.4" "$1/env.txt" && grep -q "^roofline" "$1/steps.tsv"' _ "$T/outc" "$T/compat"
else
	echo "skip gpu-check CUDA preflight: the bundle's CUDA runtime (${built_cuda:-unknown}) is not newer than 12.4"
fi

# ---------------------------------------------------------------- 6. no nvidia-smi, CUDA works
# nvidia-smi is missing but the CUDA runtime lists a GPU (a stand-in
# gpu-check-ref --list in an unpacked copy of the bundle): a GPU machine,
# not a machine without GPU. The python3 first on PATH is broken; the
# summary must come from the Python the script is told about.
rm -rf "$T/u6" && cp -a "$T/u" "$T/u6"
cat >"$T/u6/bin/gpu-check-ref" <<'EOF2'
#!/bin/sh
case "$*" in
--list) echo "0, NVIDIA H200, -, 00000000:00:05.0, 143771 MiB, 9.0" ;;
*) echo "gpu-check-ref: error: no CUDA device (unavailable): stand-in" >&2; exit 3 ;;
esac
EOF2
chmod +x "$T/u6/bin/gpu-check-ref"
mkdir -p "$T/badpy"
printf '#!/bin/sh\necho "$*" >>"%s/badpy/called"\nexit 1\n' "$T" >"$T/badpy/python3"
chmod +x "$T/badpy/python3"
real_py=$(command -v python3)
PATH="$T/badpy:$PATH" GPU_CHECK_PYTHON="$real_py" GPU_CHECK_MPI_ARGS="--backend mpi -b 8 -e 64K -f 8" \
	scripts/gpu-check --run "$T/u6" --out "$T/out6" >"$T/run6.log" 2>&1; rc=$?
check "gpu-check --run, no nvidia-smi but CUDA lists a GPU: the GPU is found" \
	bash -c 'grep -qxF "gpu-check: 1 GPU(s): 1 x NVIDIA H200" "$1" && ! grep -q "every GPU path is unavailable" "$1"' _ "$T/run6.log"
check "gpu-check --run, no nvidia-smi: env.txt says the CUDA runtime found it" \
	grep -qE '^gpu_source=cuda-runtime \(gpu-check-ref --list; nvidia-smi is not installed\)$' "$T/out6/env.txt"
check "gpu-check --run, no nvidia-smi: the GPU steps' exit 3 is a fault (exit 4)" [ $rc -eq 4 ]
check "gpu-check --run: the summary comes from GPU_CHECK_PYTHON, not the python3 first on PATH" \
	bash -c '[ -s "$1/summary.txt" ] && grep -qxF "python=$2" "$1/env.txt" && ! grep -qE "gpu-check-summary|tarfile|importlib" "$3" 2>/dev/null' \
	_ "$T/out6" "$real_py" "$T/badpy/called"

# ---------------------------------------------------------------- 7. glibc too old
# a machine whose glibc is older than what the bundle imports: stop first,
# naming both versions, before any step (which would exit 127)
mkdir -p "$T/oldlibc"
printf '#!/bin/sh\n[ "$1" = GNU_LIBC_VERSION ] && { echo "glibc 2.17"; exit 0; }\nexec /usr/bin/getconf "$@"\n' >"$T/oldlibc/getconf"
chmod +x "$T/oldlibc/getconf"
need=$(sed -n 's/^glibc_required: //p' "$T/bundle/MANIFEST.txt")
PATH="$T/oldlibc:$PATH" scripts/gpu-check --run "$T/bundle" --out "$T/out7" >"$T/run7.log" 2>&1; rc=$?
check "gpu-check --run, glibc 2.17: exits 4" [ $rc -eq 4 ]
check "gpu-check --run, glibc 2.17: names this machine's glibc and the one needed ($need)" \
	grep -qF "this machine has glibc 2.17, but the bundle needs glibc >= $need (" "$T/run7.log"
check "gpu-check --run, glibc 2.17: no step ran" bash -c '[ ! -e "$1/steps.tsv" ] && ! grep -q "^gpu-check: \[" "$2"' _ "$T/out7" "$T/run7.log"
check "gpu-check --bundle: the manifest names what needs the newest glibc" \
	grep -qE "^glibc_required_by: [^ ]+ \\([a-z_0-9]+@GLIBC_$need" "$T/bundle/MANIFEST.txt"

# ---------------------------------------------------------------- 8. a GPU library missing
# a bundle whose binary needs libcudart.so.99 (a CUDA this machine lacks, as
# libcudart.so.13 on a GPU machine without it), found nowhere:
# stop first, naming it, where it was looked for and the fix (no exit 127)
mkdir -p "$T/nolib/stub" "$T/nolib/b/bin" "$T/nolib/b/lib"
printf 'int cudaStandIn(void) { return 0; }\n' >"$T/nolib/stub.c"
printf 'int cudaStandIn(void);\nint main(void) { return cudaStandIn(); }\n' >"$T/nolib/main.c"
if cc -shared -fPIC -Wl,-soname,libcudart.so.99 "$T/nolib/stub.c" -o "$T/nolib/stub/libcudart.so.99" 2>/dev/null &&
	cc "$T/nolib/main.c" -L"$T/nolib/stub" -l:libcudart.so.99 -o "$T/nolib/b/bin/roofline" 2>/dev/null; then
	cp "$T/bundle/MANIFEST.txt" "$T/nolib/b/MANIFEST.txt"
	rm -rf "$T/nolib/stub"
	GPU_CHECK_LIB_DIRS="$T/nolib/none" scripts/gpu-check --run "$T/nolib/b" --out "$T/out8" >"$T/run8.log" 2>&1; rc=$?
	check "gpu-check --run, libcudart.so.99 missing: exits 4" [ $rc -eq 4 ]
	check "gpu-check --run, libcudart.so.99 missing: names it, where it looked and the fix" \
		bash -c 'grep -qF "libcudart.so.99 not found" "$1" && grep -qF "LD_LIBRARY_PATH=" "$1" && grep -qF "pip install nvidia-cuda-runtime nvidia-cublas nvidia-nccl-cu13" "$1" && grep -qF GPU_CHECK_LIB_DIRS "$1"' _ "$T/run8.log"
	check "gpu-check --run, libcudart.so.99 missing: no step ran" bash -c '[ ! -e "$1/steps.tsv" ] || [ "$(wc -l <"$1/steps.tsv")" -le 1 ]' _ "$T/out8"
	check "gpu-check --run, libcudart.so.99 missing: gpu-libs.txt says so" grep -qxF "libcudart.so.99 => not found" "$T/out8/gpu-libs.txt"
else
	echo "skip gpu-check --run with a GPU library missing: no C compiler"
fi
exit 0
