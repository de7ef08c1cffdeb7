# clusterhealth - GNU make build.
#
#   make            build every binary under build/
#   make test       build and run every test (unit tests, command-line tests)
#   make sweep      build, then run the node health sweep (scripts/sweep)
#   make bench      harness-overhead comparisons and workflow timings, one
#                   interleaved run, table into docs/performance.md (scripts/bench/run)
#   make detection  false alarms and detection power on drawn fleets, tables into
#                   docs/health_report.md, a sentence into README.md and docs/workflows.md
#                   (scripts/measure-detection, an hour or more)
#
# Options (on the command line):
#   WITH_CUDA=auto|yes|no   CUDA kernels and cuBLASLt GEMM  (default auto)
#   WITH_NCCL=auto|yes|no   NCCL collective backend          (default auto)
#   WITH_NVML=auto|yes|no   NVML telemetry, loaded at run time (default auto)
#   CUDA_HOME=DIR           CUDA toolkit prefix (default /usr/local/cuda)
#   CUDA_ARCH="80 90"       SM architectures to build (PTX of the last is kept)
#   SANITIZE=1              AddressSanitizer + UndefinedBehaviorSanitizer
#   V=1                     show full command lines
#   CH_DEPS_DONE=1          skip scripts/install-deps
#
# Every goal first runs scripts/install-deps (installs missing Debian
# packages when root), then re-runs make with CH_DEPS_DONE=1: what the
# build needs for every goal (--build), and for `make test` and `make unit`
# also what the tests need (--test: Criterion, Chromium, git ...).

.DEFAULT_GOAL := all
SHELL := /bin/bash

ifeq ($(CH_DEPS_DONE),)
ifeq ($(filter clean distclean,$(MAKECMDGOALS)),)
.PHONY: _outer
_outer:
	@scripts/install-deps $(if $(filter test unit,$(MAKECMDGOALS)),--test,--build)
	@$(MAKE) --no-print-directory CH_DEPS_DONE=1 $(MAKECMDGOALS)
Makefile: ;
%:: _outer ; @:
else
.PHONY: clean distclean
clean distclean:
	rm -rf build
endif
else
# ---------------------------------------------------------------- inner make

CUDA_HOME ?= /usr/local/cuda
WITH_CUDA ?= auto
WITH_NCCL ?= auto
WITH_NVML ?= auto
CUDA_ARCH ?= 80 90
SANITIZE ?= 0
V ?= 0
B ?= build

ifeq ($(V),1)
Q :=
else
Q := @
endif

define check_with
ifeq ($(filter auto yes no,$($(1))),)
$$(error $(1)='$($(1))' is not one of auto, yes, no)
endif
endef
$(eval $(call check_with,WITH_CUDA))
$(eval $(call check_with,WITH_NCCL))
$(eval $(call check_with,WITH_NVML))

# ---- detection
NVCC := $(CUDA_HOME)/bin/nvcc
CUDA_FOUND := $(and $(wildcard $(NVCC)),$(wildcard $(CUDA_HOME)/include/cuda_runtime.h),$(wildcard $(CUDA_HOME)/include/cublasLt.h))
HAVE_CUDA :=
ifneq ($(WITH_CUDA),no)
ifneq ($(CUDA_FOUND),)
HAVE_CUDA := 1
else ifeq ($(WITH_CUDA),yes)
$(error WITH_CUDA=yes but no CUDA toolkit with cuBLASLt under CUDA_HOME='$(CUDA_HOME)' (need bin/nvcc, include/cuda_runtime.h, include/cublasLt.h); install the toolkit or set CUDA_HOME)
endif
endif

NCCL_INC := $(firstword $(wildcard $(CUDA_HOME)/include/nccl.h /usr/include/nccl.h $(NCCL_HOME)/include/nccl.h))
HAVE_NCCL :=
ifneq ($(WITH_NCCL),no)
ifneq ($(and $(HAVE_CUDA),$(NCCL_INC)),)
HAVE_NCCL := 1
else ifeq ($(WITH_NCCL),yes)
$(error WITH_NCCL=yes but nccl.h was not found (looked in $(CUDA_HOME)/include, /usr/include and NCCL_HOME) or CUDA is disabled; install NCCL or set NCCL_HOME)
endif
endif

NVML_INC := $(firstword $(wildcard $(CUDA_HOME)/include/nvml.h $(CUDA_HOME)/targets/*/include/nvml.h /usr/include/nvml.h))
HAVE_NVML :=
NVML_HEADER :=
ifneq ($(WITH_NVML),no)
HAVE_NVML := 1
ifneq ($(NVML_INC),)
NVML_HEADER := 1
else ifeq ($(WITH_NVML),yes)
$(error WITH_NVML=yes but nvml.h was not found under $(CUDA_HOME) or /usr/include; install the CUDA NVML development package or use WITH_NVML=auto)
endif
endif

# ---- flags
PKGS := ompi-c hwloc jansson openblas plplot zlib sqlite3 simdjson
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
GIT_REV := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

# ---- include rules (docs/architecture.md): includes name their folder from
# the repository root ("base/ch_common.h"). Each part compiles against a view,
# $(B)/inc/PART, that holds links to the parts it may include and nothing
# else, so that a forbidden include does not compile; the tests see the whole
# tree. tests/cli/arrows.sh checks the same rules on every file, headers too.
PART_USES_base := base
PART_USES_hw := base hw
PART_USES_kernels := base hw kernels
PART_USES_comm := base hw comm
PART_USES_bench := base hw kernels comm bench
PART_USES_report := base hw report
PARTS := base hw kernels comm bench report
INC_SPEC := $(CURDIR) $(foreach p,$(PARTS),$(p):$(subst $(eval) ,+,$(PART_USES_$(p))))
$(shell [ "$$(cat $(B)/inc/.spec 2>/dev/null)" = '$(INC_SPEC)' ] || { rm -rf $(B)/inc; $(foreach p,$(PARTS),mkdir -p $(B)/inc/$(p); $(foreach u,$(PART_USES_$(p)),ln -s $(CURDIR)/$(u) $(B)/inc/$(p)/$(u);)) echo '$(INC_SPEC)' > $(B)/inc/.spec; })
# The part of an object is the first folder of its source: build/obj/PART/...
part_of = $(word 3,$(subst /, ,$(patsubst $(B)/%,x/%,$(1))))
part_inc = -I$(B)/gen $(if $(filter $(PARTS),$(call part_of,$(1))),-I$(B)/inc/$(call part_of,$(1)),-I.)
DEFS := -D_GNU_SOURCE
# The revision goes into a generated header, rewritten only when it changes,
# so that a commit rebuilds one object rather than everything.
$(shell mkdir -p $(B)/gen; echo '#define CH_GIT_REV "$(GIT_REV)"' > $(B)/gen/ch_git_rev.h.new; cmp -s $(B)/gen/ch_git_rev.h.new $(B)/gen/ch_git_rev.h || mv $(B)/gen/ch_git_rev.h.new $(B)/gen/ch_git_rev.h; rm -f $(B)/gen/ch_git_rev.h.new)
CUDA_CFLAGS :=
CUDA_LIBS :=
ifneq ($(HAVE_CUDA),)
DEFS += -DHAVE_CUDA=1
CUDA_CFLAGS := -I$(CUDA_HOME)/include
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublasLt -lcudart
endif
ifneq ($(HAVE_NCCL),)
DEFS += -DHAVE_NCCL=1
CUDA_CFLAGS += -I$(dir $(NCCL_INC))
CUDA_LIBS += -lnccl
endif
ifneq ($(HAVE_NVML),)
DEFS += -DHAVE_NVML=1
ifneq ($(NVML_HEADER),)
DEFS += -DHAVE_NVML_H=1
CUDA_CFLAGS += -I$(dir $(NVML_INC))
endif
endif

SAN_FLAGS :=
ifeq ($(SANITIZE),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# hwloc's PCI plugin is dlclose'd at exit and libpciaccess with it, so
# LeakSanitizer cannot name the library its exit-time leak comes from; keep
# libpciaccess mapped so that tests/lsan.supp can suppress it.
ifneq ($(wildcard /usr/lib/*/libpciaccess.so.0),)
SAN_LIBS := -Wl,--no-as-needed -l:libpciaccess.so.0 -Wl,--as-needed
endif
endif

CC ?= gcc
CXX ?= g++
CFLAGS ?= -O2 -g
CXXFLAGS ?= -O2 -g
ALL_CFLAGS := -std=gnu11 $(CFLAGS) -Wall -Wextra -fopenmp -MMD -MP $(SAN_FLAGS) $(DEFS) $(CUDA_CFLAGS) $(PKG_CFLAGS)
# --as-needed: a binary records only the libraries it calls (roofline never
# calls NCCL or Open MPI's collectives, so it starts on a node without
# libnccl.so.2), whatever the toolchain's default
# C++ (report/read/hr_fastjson.cpp: simdjson's parser behind a C function)
ALL_CXXFLAGS := -std=c++17 $(CXXFLAGS) -Wall -Wextra -MMD -MP $(SAN_FLAGS) $(DEFS) $(PKG_CFLAGS)
LDLIBS := -Wl,--as-needed $(PKG_LIBS) $(CUDA_LIBS) -lstdc++ -ldl -lpthread -lm $(SAN_LIBS)
ALL_LDFLAGS := -fopenmp $(SAN_FLAGS) $(LDFLAGS)
NVCC_GENCODE := $(foreach a,$(CUDA_ARCH),-gencode arch=compute_$(a),code=sm_$(a)) -gencode arch=compute_$(lastword $(CUDA_ARCH)),code=compute_$(lastword $(CUDA_ARCH))
NVCCFLAGS := -O3 -std=c++17 $(NVCC_GENCODE) $(DEFS) -Xcompiler -Wall,-Wextra
ifeq ($(SANITIZE),1)
NVCCFLAGS += -Xcompiler -fno-omit-frame-pointer
endif

# ---- sources: every .c below these folders goes into libclusterhealth.a,
# except the mains; folders named cuda/ need CUDA, folders named nccl/ NCCL.
MAINS := $(wildcard bench/roofline.c bench/allreduce_bw.c bench/loader_contention.c bench/checkpoint_io.c report/health_report.c)
BINS := $(patsubst %.c,$(B)/%,$(notdir $(MAINS)))
SRC_DIRS := base hw bench/common bench/loader bench/loader/cuda bench/roofline bench/allreduce bench/checkpoint bench/checkpoint/cuda kernels kernels/cpu kernels/cuda comm comm/mpi comm/nccl report report/read report/judge report/canary report/history report/render
ALL_C := $(filter-out $(MAINS),$(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.c)))
ALL_CU := $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.cu))
ALL_CPP := $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.cpp))
# (filter-out takes one % per pattern: drop_dir removes the files below a
# folder of that name)
drop_dir = $(foreach f,$(2),$(if $(findstring /$(1)/,/$(f)),,$(f)))
ifeq ($(HAVE_CUDA),)
ALL_C := $(call drop_dir,cuda,$(ALL_C))
ALL_CU :=
endif
ifeq ($(HAVE_NCCL),)
ALL_C := $(call drop_dir,nccl,$(ALL_C))
ALL_CU := $(call drop_dir,nccl,$(ALL_CU))
endif
LIB_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(ALL_C)) $(patsubst %.cpp,$(B)/obj/%.cpp.o,$(ALL_CPP)) $(patsubst %.cu,$(B)/obj/%.cu.o,$(ALL_CU))
LIB := $(B)/libclusterhealth.a
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(UNIT_SRCS))
UNIT_BIN := $(B)/tests/unit_tests

# Rebuild everything when the flags change (e.g. SANITIZE=1 after a plain build).
FLAGS_SIG := $(ALL_CFLAGS) | $(ALL_CXXFLAGS) | $(INC_SPEC) | $(NVCCFLAGS) | $(LDLIBS) | $(ALL_LDFLAGS)
FLAGS_FILE := $(B)/.flags
$(shell mkdir -p $(B); [ "$$(cat $(FLAGS_FILE) 2>/dev/null)" = '$(subst ','"'"',$(FLAGS_SIG))' ] || echo '$(subst ','"'"',$(FLAGS_SIG))' > $(FLAGS_FILE))

ifeq ($(MAKELEVEL),1)
$(info clusterhealth: CUDA $(if $(HAVE_CUDA),yes ($(CUDA_HOME), arch $(CUDA_ARCH)),no) | NCCL $(if $(HAVE_NCCL),yes,no) | NVML $(if $(HAVE_NVML),run-time loading$(if $(NVML_HEADER), (nvml.h),),no) | MPI $(shell pkg-config --modversion ompi-c 2>/dev/null) | sanitizers $(if $(filter 1,$(SANITIZE)),on,off))
endif

.PHONY: all test unit cli sweep bench detection clean
all: $(LIB) $(BINS)

$(B)/obj/%.o: %.c $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(call part_inc,$@) -c $< -o $@

$(B)/obj/%.cpp.o: %.cpp $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CXX     $<")
	$(Q)$(CXX) $(ALL_CXXFLAGS) $(call part_inc,$@) -c $< -o $@

$(B)/obj/%.cu.o: %.cu $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(NVCCFLAGS) $(call part_inc,$@) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# the mains' objects are kept: make would otherwise delete them as
# intermediate files and rebuild every binary on each run
.SECONDARY: $(patsubst bench/%.c,$(B)/obj/bench/%.o,$(wildcard bench/*.c))

$(B)/%: $(B)/obj/bench/%.o $(LIB)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(ALL_LDFLAGS) $< $(LIB) $(LDLIBS) -o $@

$(B)/health_report: $(B)/obj/report/health_report.o $(LIB)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(ALL_LDFLAGS) $< $(LIB) $(LDLIBS) -o $@

$(UNIT_BIN): $(UNIT_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(ALL_LDFLAGS) $(UNIT_OBJS) $(LIB) $(LDLIBS) $(shell pkg-config --libs criterion) -o $@

# a slow file system for tests/cli/checkpoint_io.sh (LD_PRELOAD shim)
SLOWIO := $(B)/tests/libslowio.so
$(SLOWIO): tests/slowio.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -O2 -shared -fPIC -Wall -Wextra $< -ldl -o $@

# a host without OpenBLAS for tests/cli/canary.sh (LD_PRELOAD shim: dlopen of it fails)
NOLAPACK := $(B)/tests/libnolapack.so
$(NOLAPACK): tests/nolapack.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -O2 -shared -fPIC -Wall -Wextra $< -ldl -o $@

# a rank that stops in MPI_Init, for tests/cli/reliability.sh (LD_PRELOAD shim)
STOPRANK := $(B)/tests/libstoprank.so
$(STOPRANK): tests/stoprank.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -O2 -shared -fPIC -Wall -Wextra $(shell pkg-config --cflags ompi-c) $< $(shell pkg-config --libs ompi-c) -o $@

# a fault in one all-reduce size for tests/cli/confirm.sh (LD_PRELOAD shim, PMPI)
SLOWAR := $(B)/tests/libslowallreduce.so
$(SLOWAR): tests/slowallreduce.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -O2 -shared -fPIC -Wall -Wextra $(shell pkg-config --cflags ompi-c) $< -o $@

# a stand-in libnvidia-ml.so.1 for tests/cli/inventory.sh, powercap.sh and the
# energy-window unit tests (tests/fake-nvml; its SONAME lets a test load it by
# path first)
FAKE_NVML := $(B)/tests/fake-nvml/libnvidia-ml.so.1
$(FAKE_NVML): tests/fake-nvml/fake_nvml.c tests/fake-nvml/fake_nvml_power.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -O2 -Wall -Wextra -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 $^ -o $@ -lm -lpthread

# a CUDA runtime whose driver is too old (LD_PRELOAD), for tests/cli/cuda_preflight.sh
FAKE_CUDART := $(B)/tests/libfakecudart.so
$(FAKE_CUDART): tests/fake-cudart/fake_cudart.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -O2 -Wall -Wextra -shared -fPIC $< -o $@

# roofline's main over a stand-in GPU backend for tests/cli/powercap.sh (tests/standin)
STANDIN := $(B)/tests/roofline-standin
$(STANDIN): bench/roofline.c tests/standin/standin_gpu.c $(LIB) $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(filter-out -MMD -MP,$(ALL_CFLAGS)) -I$(B)/gen -I. -DCH_RL_GPU_BACKEND=ch_backend_standin \
		$(ALL_LDFLAGS) bench/roofline.c tests/standin/standin_gpu.c $(LIB) $(LDLIBS) -o $@

unit: $(UNIT_BIN) $(FAKE_NVML)
test: all $(UNIT_BIN) $(SLOWIO) $(SLOWAR) $(STOPRANK) $(FAKE_NVML) $(STANDIN) $(FAKE_CUDART) $(NOLAPACK)
	$(Q)SANITIZE=$(SANITIZE) WITH_CUDA=$(WITH_CUDA) scripts/run-tests

sweep: all
	$(Q)scripts/sweep

bench: all
	$(Q)B=$(B) scripts/bench/run

detection: all
	$(Q)B=$(B) scripts/measure-detection --doc docs/health_report.md --sentence README.md --sentence docs/workflows.md --json $(B)/detection.json

clean:
	rm -rf $(B)

-include $(LIB_OBJS:.o=.d) $(UNIT_OBJS:.o=.d) $(patsubst %.c,$(B)/obj/%.d,$(MAINS))
endif
