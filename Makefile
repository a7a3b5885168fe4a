# dlasim — build, test, demo, bench.
#
#   make            libraries (build/libdlasim.a, build/libdlasim.so, the
#                   preload libraries build/libdlasim-*.so) and CLI (build/dlasim)
#   make install    headers, libraries and dlasim.pc under PREFIX (/usr/local)
#   make demo       a Fashion-MNIST CNN (ONNX) compiled, calibrated and run on nv_small
#   make conformance  NVDLA's conformance traces as a readable table
#   make test       unit, device, property, conformance and fuzz tests, then
#                   the same under AddressSanitizer + UndefinedBehaviorSanitizer,
#                   and the Slurm recipe on a one-node cluster (make test-slurm)
#   make bench      performance measurements (long; not part of make test)
#   make fuzz-long  every fuzz target for FUZZ_SECONDS seconds and/or FUZZ_RUNS
#                   executions each (default 600 s), with a summary table (not
#                   part of make test); FUZZ_ONLY="csb trace" picks targets
#   make plot       timing plot and timeline of a trace (build/timing.png)
#
# Variables: CC (gcc or clang), BUILD (output folder), SAN=1 (sanitizers).

CC      ?= cc
BUILD   ?= build
SHARED  ?= ../shared
CONFORMANCE ?= $(SHARED)/conformance/nvdla-traces

# The library is built position-independent with hidden symbols: only what
# the public headers declare (DLASIM_API_BEGIN/END, include/dlasim/export.h)
# is exported from libdlasim.so, and the internal names (dla_*, nvrt_*,
# onnx__*) cannot clash with an application's (NVIDIA's firmware has a
# dla_error).  One object set serves the CLI, tests and both libraries:
# Debian's compilers default to PIE, and -fPIC with hidden symbols measured
# no slowdown (docs/library.md: conv_bench CPU time).
PIC     := -fPIC -fvisibility=hidden -fno-semantic-interposition
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# -ffp-contract=off: no fused multiply-adds the source does not write, so gcc (which does not
# contract in ISO C mode) and clang (which does inside its avx2,fma kernels) compute the same
# floats: the compiler's calibration, and so every recording, is the same in both builds
# (tests/traces/rtl_graded_net.sh compares recordings with the graded ones)
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L -ffp-contract=off
OPT     ?= -O2 -g
CFLAGS_ALL := $(CSTD) $(OPT) $(PIC) $(WARN) -Iinclude -Isrc -Itools/dlasim -I$(BUILD)/gen -MMD -MP $(CFLAGS)
LDLIBS  := -ljpeg -lpthread -lm

ifeq ($(SAN),1)
# DLA_ONE_COPY: the kernels' loops compiled once, not once more per constant
# shape they are specialised on for speed (src/arith/lanes.h DLA_SPECIALIZE)
CFLAGS_ALL += -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
              -DDLA_ONE_COPY
LDFLAGS    += -fsanitize=address,undefined
endif

# src/uapi/ is not part of the library: it is the preload libraries' code.
LIB_SRC  := $(sort $(filter-out src/uapi/%,$(wildcard src/*/*.c src/*/*/*.c)))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)

# ONNX reading: C generated at build time by protoc-c from the onnx.proto that
# Debian's python3-onnx ships (src/compiler/onnx_read.c).
ONNX_PROTO ?= /usr/lib/python3/dist-packages/onnx/onnx.proto
GEN     := $(BUILD)/gen
ONNX_GEN_OBJ := $(BUILD)/obj/gen/onnx.pb-c.o
LIB_OBJ += $(ONNX_GEN_OBJ)
PB_LIBS := -lprotobuf-c -lpng
CLI_SRC  := $(sort $(wildcard tools/dlasim/*.c))
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(sort $(wildcard tests/unit/*.c tests/device/*.c tests/property/*.c))
TEST_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
TEST_COMMON := $(sort $(wildcard tests/common/*.c))
TEST_COMMON_OBJ := $(TEST_COMMON:%.c=$(BUILD)/obj/%.o)
# Every tests/fuzz/fuzz_NAME.c is a libFuzzer target (build-fuzz/fuzz_NAME)
# and, linked with tests/fuzz/replay.c, a plain replay of its seeds in every
# test build ($(BUILD)/tests/fuzz/replay_NAME).
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRC))
FUZZ_BIN := $(FUZZ_NAMES:%=build-fuzz/fuzz_%)
REPLAY_BIN := $(FUZZ_NAMES:%=$(BUILD)/tests/fuzz/replay_%)

# Version: one source of truth, include/dlasim/version.h.
VERSION := $(shell sed -n 's/^\#define DLASIM_VERSION_STRING "\(.*\)"/\1/p' include/dlasim/version.h)
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
# Libraries the library needs (dlasim.pc Libs.private, the .so's DT_NEEDED)
LIB_DEPS := -lz -lmd -lprotobuf-c -lpng -ljpeg -lpthread -lm
ifneq ($(SAN),1)
SO_LDFLAGS := -Wl,--no-undefined
endif
# Internal archive for the CLI, tests and tools: every object with its hidden
# symbols still linkable (not installed).
INTERNAL_LIB := $(BUILD)/obj/libdlasim-internal.a
# Preload libraries (docs/nvdla-uapi.md): $(BUILD)/libdlasim-NAME.so from
# src/uapi/preload.c (the interposition core), the device's own sources
# (one prerequisites line per device below) and the library's objects.
UAPI_LIBS := $(BUILD)/libdlasim-nvdla.so $(BUILD)/libdlasim-rocket.so
UAPI_CORE_OBJ := $(BUILD)/obj/src/uapi/preload.o $(BUILD)/obj/src/uapi/bo.o
# the NVDLA DRM device (decoder + buffers), also linked by its tests and fuzz target
UAPI_NVDLA_SRC := src/uapi/nvdla_drm.c src/uapi/bo.c

.PHONY: all demo conformance test test-fast test-san test-slurm bench deps regs clean fuzz fuzz-long plot rtl-grade rtl-grade-net install arm64 teflon-sweep zoo
all: $(BUILD)/dlasim $(BUILD)/libdlasim.a $(BUILD)/libdlasim.so $(UAPI_LIBS)

# Objects are rebuilt when the compile flags change (PIC, SAN, OPT, ...).
FLAGS_STAMP := $(BUILD)/obj/flags.txt
$(FLAGS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(CC) $(CFLAGS_ALL)' | cmp -s - $@ || echo '$(CC) $(CFLAGS_ALL)' > $@
.PHONY: FORCE

$(BUILD)/obj/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(GEN)/onnx.pb-c.c: $(ONNX_PROTO)
	@mkdir -p $(GEN)
	cp $(ONNX_PROTO) $(GEN)/onnx.proto
	cd $(GEN) && protoc-c --c_out=. onnx.proto
$(GEN)/onnx.pb-c.h: $(GEN)/onnx.pb-c.c
$(ONNX_GEN_OBJ): $(GEN)/onnx.pb-c.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(OPT) $(PIC) -I$(GEN) $(filter -fsanitize%,$(CFLAGS_ALL)) -c $< -o $@
$(BUILD)/obj/src/compiler/onnx_read.o: $(GEN)/onnx.pb-c.h

$(INTERNAL_LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The public static library: one partially linked object whose hidden
# symbols are made local, so only the API is global in it too.
$(BUILD)/obj/dlasim-public.o: $(LIB_OBJ)
	$(CC) -r -nostdlib -o $@ $^
	objcopy --localize-hidden $@
$(BUILD)/libdlasim.a: $(BUILD)/obj/dlasim-public.o
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libdlasim.so.$(VERSION): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libdlasim.so.$(SOMAJOR) $(SO_LDFLAGS) $(LDFLAGS) -o $@ $^ $(LIB_DEPS)
$(BUILD)/libdlasim.so: $(BUILD)/libdlasim.so.$(VERSION)
	ln -sf libdlasim.so.$(VERSION) $(BUILD)/libdlasim.so.$(SOMAJOR)
	ln -sf libdlasim.so.$(VERSION) $@

$(BUILD)/libdlasim-nvdla.so: $(BUILD)/obj/src/uapi/nvdla_drm.o $(BUILD)/obj/src/uapi/nvdla_preload.o
# rocket (docs/teflon.md): the device model and the RK3588 driver helpers
# only, without the compiler, loadable and image code, so that it builds for
# a client's architecture (make arm64) without their dependencies there.
ROCKET_LIB_OBJ := $(filter-out $(BUILD)/obj/src/compiler/% $(BUILD)/obj/src/loadable/% \
    $(BUILD)/obj/src/driver/nvdla/% $(BUILD)/obj/src/driver/port_record.o \
    $(BUILD)/obj/src/driver/runtime.o $(BUILD)/obj/src/trace/% $(ONNX_GEN_OBJ),$(LIB_OBJ))
ROCKET_OBJ := $(BUILD)/obj/src/uapi/rocket.o $(BUILD)/obj/src/uapi/rocket_preload.o
$(BUILD)/libdlasim-rocket.so: $(UAPI_CORE_OBJ) $(ROCKET_OBJ) $(ROCKET_LIB_OBJ)
	$(CC) -shared $(SO_LDFLAGS) $(LDFLAGS) -o $@ $^ -ldl -lpthread -lm
# The whole Teflon conformance sweep (docs/teflon.md; make test runs a subset):
# the README's table, about 250 models under qemu (several minutes).
teflon-sweep: all
	@/usr/bin/python3 tools/teflon/gen_models.py $(BUILD)/teflon-sweep --subset full > /dev/null
	@sh tools/teflon/sweep.sh $(BUILD)/dlasim $(BUILD)/teflon-sweep tests/teflon/known.txt --table

# make arm64: the rocket shim and the TFLite runner of `dlasim teflon`
# (docs/teflon.md) for Debian's arm64 Teflon, with the cross compilers and
# the arm64 sysroot tools/teflon/fetch.sh unpacks (TEFLON_SYSROOT).
TEFLON_SYSROOT ?= $(or $(DLASIM_TEFLON_CACHE),$(HOME)/.cache/dlasim/teflon)/sysroot
ARM64_CC  ?= aarch64-linux-gnu-gcc
ARM64_CXX ?= aarch64-linux-gnu-g++
arm64:
	@$(MAKE) -s CC=$(ARM64_CC) BUILD=build-arm64 build-arm64/libdlasim-rocket.so build-arm64/teflon-runner
# The sysroot's libraries are newer than the cross toolchain's C library:
# their symbols are resolved at run time, in the sysroot (qemu -L).
$(BUILD)/teflon-runner: tools/teflon/runner.cc
	@test -f $(TEFLON_SYSROOT)/usr/include/tensorflow/lite/interpreter.h || \
	    { echo "no TFLite headers in $(TEFLON_SYSROOT): run tools/teflon/fetch.sh"; exit 1; }
	$(ARM64_CXX) -std=c++17 -O2 -Wall -Wextra -Werror -isystem $(TEFLON_SYSROOT)/usr/include $< -o $@ \
	    -L$(TEFLON_SYSROOT)/usr/lib/aarch64-linux-gnu -Wl,-rpath-link,$(TEFLON_SYSROOT)/usr/lib/aarch64-linux-gnu \
	    -Wl,--allow-shlib-undefined -ltensorflow-lite
$(BUILD)/libdlasim-%.so: $(UAPI_CORE_OBJ) $(BUILD)/obj/dlasim-public.o
	$(CC) -shared $(SO_LDFLAGS) $(LDFLAGS) -o $@ $^ $(LIB_DEPS) -ldl

# make install PREFIX=... [DESTDIR=...]: the public headers (with the
# runtime port and the generated register maps under dlasim/regs/), both
# libraries, the preload libraries and dlasim.pc.
# dlasim.pc is written at install time: it names PREFIX.
install: all
	install -d $(DESTDIR)$(INCDIR)/dlasim/regs $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 644 include/dlasim/*.h $(DESTDIR)$(INCDIR)/dlasim/
	install -m 644 src/regs/gen/nvdla_regs.h src/regs/gen/rk3588_regs.h $(DESTDIR)$(INCDIR)/dlasim/regs/
	install -m 644 $(BUILD)/libdlasim.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(BUILD)/libdlasim.so.$(VERSION) $(UAPI_LIBS) $(DESTDIR)$(LIBDIR)/
	ln -sf libdlasim.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libdlasim.so.$(SOMAJOR)
	ln -sf libdlasim.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libdlasim.so
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCDIR)' '' \
	    'Name: dlasim' 'Description: register-level model of NVIDIA NVDLA and the RK3588 NPU' \
	    'Version: $(VERSION)' 'Libs: -L$${libdir} -ldlasim' 'Libs.private: $(LIB_DEPS)' \
	    'Cflags: -I$${includedir}' > $(DESTDIR)$(LIBDIR)/pkgconfig/dlasim.pc

$(BUILD)/dlasim: $(CLI_OBJ) $(INTERNAL_LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(INTERNAL_LIB) -lz -lmd $(PB_LIBS) $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(TEST_COMMON_OBJ) $(INTERNAL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests $(LDFLAGS) -o $@ $< $(filter $(BUILD)/obj/src/uapi/%,$^) $(TEST_COMMON_OBJ) $(INTERNAL_LIB) -lcmocka -lz $(PB_LIBS) $(LDLIBS)
# tests of the NVDLA UAPI decoder link it directly (no interposition)
UAPI_NVDLA_OBJ := $(UAPI_NVDLA_SRC:%.c=$(BUILD)/obj/%.o)
$(BUILD)/tests/unit/test_nvdla_uapi: $(UAPI_NVDLA_OBJ)
# the rocket UAPI decoder (docs/teflon.md), also not in the library
UAPI_ROCKET_SRC := src/uapi/rocket.c src/uapi/bo.c
$(BUILD)/tests/unit/test_rocket_uapi: $(UAPI_ROCKET_SRC:%.c=$(BUILD)/obj/%.o)
$(BUILD)/tests/fuzz/replay_rocket_uapi: $(UAPI_ROCKET_SRC:%.c=$(BUILD)/obj/%.o)

$(BUILD)/tests/fuzz/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(INTERNAL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -I$(GEN) $(LDFLAGS) -o $@ $< tests/fuzz/replay.c $(filter $(BUILD)/obj/src/uapi/%,$^) $(INTERNAL_LIB) -lz $(PB_LIBS) $(LDLIBS)
$(BUILD)/tests/fuzz/replay_nvdla_uapi: $(UAPI_NVDLA_SRC:%.c=$(BUILD)/obj/%.o)

# The NVDLA UAPI client (tests/traces/uapi_nvdla.sh runs it under the preload library)
$(BUILD)/tests/uapi/%: tests/uapi/%.c $(INTERNAL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< $(INTERNAL_LIB) -lz $(PB_LIBS) $(LDLIBS)
UAPI_TEST_BIN := $(patsubst tests/uapi/%.c,$(BUILD)/tests/uapi/%,$(wildcard tests/uapi/*.c))

tests: $(TEST_BIN) $(REPLAY_BIN) $(UAPI_TEST_BIN) $(UAPI_LIBS) $(BUILD)/rtlgrade/convcase $(BUILD)/rtlgrade/imgcase


# Regenerate the register tables from the register database.
regs:
	python3 tools/regdb/gen_regs.py regdb/nvdla.xml src/regs/gen docs/registers.md
	python3 tools/regdb/gen_regs.py regdb/rk3588.xml src/regs/gen docs/registers-rk3588.md
	python3 tools/regdb/gen_regs.py --index src/regs/gen/regdb_all.c regdb/nvdla.xml regdb/rk3588.xml

deps:
	@sh tools/deps.sh

# The demo: a Fashion-MNIST CNN (models/fashion_mnist.onnx, trained by
# tools/models/train_fashion_mnist.py) compiled for nv_small, calibrated on
# training images, run on the 10,000 test images of Debian's
# dataset-fashion-mnist on the simulated device; then ONNX Runtime fp32
# (npm, as make bench installs it) on the same images, the two times side by side.
FMNIST  ?= /usr/share/datasets/fashion-mnist
demo: deps
	@$(MAKE) -s all
	@echo "dlasim demo: a Fashion-MNIST CNN (models/fashion_mnist.onnx) compiled for nv_small, calibrated"
	@echo "on 1,000 training images, run on the 10,000 test images on the simulated device and in float"
	@$(BUILD)/dlasim run models/fashion_mnist.onnx --config nv_small \
	    --calib $(FMNIST)/train-images-idx3-ubyte.gz --calib-count 1000 \
	    --input $(FMNIST)/t10k-images-idx3-ubyte.gz --labels $(FMNIST)/t10k-labels-idx1-ubyte.gz \
	    --names models/fashion_mnist.names --compare-float --report --draw 4 --progress \
	    --times $(BUILD)/demo_times.json
	@sh bench/demo_peer.sh $(BUILD) models/fashion_mnist.onnx $(FMNIST)/t10k-images-idx3-ubyte.gz \
	    $(BUILD)/demo_times.json

# NVIDIA's conformance traces as a readable table.
conformance: deps
	@$(MAKE) -s all
	@$(BUILD)/dlasim trace --suite $(CONFORMANCE)/nv_small --table --expect tests/traces/nv_small.expect

# One pass: build and run every kind of test in this BUILD.
test-fast: all tests
	@sh tests/run.sh $(BUILD) $(CONFORMANCE)

# Everything: plain build, ASan+UBSan build, fuzzing, generated-file check.
test: deps
	@sh tests/all.sh $(CONFORMANCE)

# The Slurm recipe (tools/slurm, docs/cluster.md) on a one-node cluster started
# on this machine (root; installs munge and slurm from Debian when missing).
test-slurm: deps
	@$(MAKE) -s all
	@CONFORMANCE=$(CONFORMANCE) sh tests/slurm/run.sh $(BUILD)

# libFuzzer targets (clang only): every tests/fuzz/fuzz_*.c (now the trace
# parser and player, CSB programming, loadables, RK3588 regcmd lists).
FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := $(CSTD) -O1 -g -Iinclude -Isrc -I$(GEN) -MMD -MP -DDLA_ONE_COPY
# The library is compiled once for every target (build-fuzz/obj).  Its numeric
# inner loops keep edge coverage but not compare tracing (trace-cmp): there the
# compared values are loop bounds and element indexes, never input bytes, and
# tracing them took two thirds of fuzz_onnx's time (perf, float executor).
FUZZ_NOCMP_SRC := $(wildcard src/arith/*.c src/kernels/*.c) src/compiler/float_exec.c
FUZZ_OBJ := $(LIB_SRC:%.c=build-fuzz/obj/%.o) build-fuzz/obj/gen/onnx.pb-c.o
fuzz: $(FUZZ_BIN)
build-fuzz/obj/gen/onnx.pb-c.o: $(GEN)/onnx.pb-c.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(FUZZ_FLAGS) -c $< -o $@
build-fuzz/obj/%.o: %.c $(GEN)/onnx.pb-c.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(WARN) $(FUZZ_FLAGS) \
	    $(if $(filter $<,$(FUZZ_NOCMP_SRC)),-fno-sanitize-coverage=trace-cmp) -c $< -o $@
build-fuzz/fuzz_%: build-fuzz/obj/tests/fuzz/fuzz_%.o $(FUZZ_OBJ)
	clang $(FUZZ_FLAGS) -o $@ $^ -lz $(PB_LIBS) $(LDLIBS)
# the NVDLA UAPI decoder is not in the library (src/uapi/)
build-fuzz/fuzz_nvdla_uapi: $(UAPI_NVDLA_SRC:%.c=build-fuzz/obj/%.o)
build-fuzz/fuzz_rocket_uapi: $(UAPI_ROCKET_SRC:%.c=build-fuzz/obj/%.o)
.SECONDARY: $(FUZZ_NAMES:%=build-fuzz/obj/tests/fuzz/fuzz_%.o)
-include $(FUZZ_OBJ:.o=.d) $(UAPI_NVDLA_SRC:%.c=build-fuzz/obj/%.d) build-fuzz/obj/src/uapi/rocket.d $(FUZZ_NAMES:%=build-fuzz/obj/tests/fuzz/fuzz_%.d)

# A long campaign: each target for FUZZ_SECONDS and/or FUZZ_RUNS executions
# (whichever ends first; 600 s when neither is given), corpora kept in
# build-fuzz/corpus-NAME, logs and findings in build-fuzz/logs, artifacts.
FUZZ_SECONDS ?=
FUZZ_RUNS ?=
FUZZ_ONLY ?= $(FUZZ_NAMES)
# NVIDIA's regression loadables seed fuzz_loadable where the conformance data has them
FUZZ_EXTRA := $(foreach d,PDP SDP CDP,$(wildcard $(CONFORMANCE)/../nvdla-loadables/flatbufs/kmd/$(d)))
DIFF_LONG_CASES ?= 3000
fuzz-long: deps fuzz
	@$(MAKE) -s all
	@echo "== differential harness: $(DIFF_LONG_CASES) random ONNX graphs x 3 configurations (seed 2)"
	@DIFF_CASES=$(DIFF_LONG_CASES) DIFF_SEED=2 DLASIM=$(BUILD)/dlasim sh tests/cli/differential.sh | tail -3
	@SUMMARY=1 sh tests/fuzz/run.sh --corpus keep --seed 0 $(FUZZ_EXTRA:%=--seeds loadable=%) \
	    $(if $(FUZZ_RUNS),--runs $(FUZZ_RUNS)) \
	    $(if $(FUZZ_SECONDS),--seconds $(FUZZ_SECONDS),$(if $(FUZZ_RUNS),,--seconds 600)) \
	    $(FUZZ_ONLY:%=build-fuzz/fuzz_%)

# RTL grading (tools/rtlgrade/README.md): regenerate the cases of
# tests/traces/rtl-graded and grade them on the nv_small RTL built at RTL.
RTL ?= /tmp/rtl
$(BUILD)/rtlgrade/convcase: tools/rtlgrade/convcase.c tools/rtlgrade/trace_out.c $(INTERNAL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< tools/rtlgrade/trace_out.c $(INTERNAL_LIB) -lz $(LDLIBS)
$(BUILD)/rtlgrade/imgcase: tools/rtlgrade/imgcase.c tools/rtlgrade/trace_out.c $(TEST_COMMON_OBJ) $(INTERNAL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests $(LDFLAGS) -o $@ $< tools/rtlgrade/trace_out.c $(TEST_COMMON_OBJ) $(INTERNAL_LIB) -lcmocka -lz $(PB_LIBS) $(LDLIBS)

rtl-grade: all $(BUILD)/rtlgrade/convcase $(BUILD)/rtlgrade/imgcase
	@sh tools/rtlgrade/rtl-grade.sh $(BUILD) $(RTL) $(SHARED)
	@sh tools/rtlgrade/rtl-grade-net.sh $(BUILD) $(RTL) $(SHARED)
# only the network family (tests/traces/rtl-graded-net): NETS="resnet18 ..." for some of them
rtl-grade-net: all
	@sh tools/rtlgrade/rtl-grade-net.sh $(BUILD) $(RTL) $(SHARED) $(NETS)

BENCH_BIN := $(BUILD)/conv_bench $(BUILD)/runtime_bench $(BUILD)/model_bench $(BUILD)/kernel_peak \
    $(BUILD)/link_rtt \
    $(BUILD)/conv_kernel_bench
bench: deps all $(BENCH_BIN)
	@echo "== dlasim vs ONNX Runtime (bench/peer_bench.sh): ResNet-18/50, MobileNetV2, per image"
	@sh bench/peer_bench.sh $(BUILD)
	@echo; $(BUILD)/conv_bench --json $(BUILD)/bench.json
	@echo; echo "== the convolution kernel alone, per instruction set (bench/conv_kernel_bench.c)"
	@$(BUILD)/conv_kernel_bench 2 3 --no-ref
	@echo; echo "== timing model vs the nv_small RTL: cycles_to_last_intr per case (docs/timing.md)"
	@$(BUILD)/dlasim trace --suite $(CONFORMANCE)/nv_small --timing --expect tests/traces/nv_small.expect \
	    --rtl $(SHARED)/reference/rtl_cycles_nv_small.csv | grep -v '^PASS\|^FAIL' || true
	@echo; echo "== functional speed with the timing model on"
	@sh tools/timing/overhead.sh $(BUILD)/conv_bench 4
	@echo; echo "== runtime: overhead over the device, dlasim loadable process time"
	@$(BUILD)/runtime_bench $(BUILD)/dlasim $(SHARED)/conformance/nvdla-loadables
	@echo; echo "== ONNX compiler: Fashion-MNIST, ResNet-18, ResNet-50 on nv_small"
	@sh bench/onnx_bench.sh $(BUILD)/dlasim $(BUILD)

# The model zoo of issue 17 (README "Model zoo"): torchvision models as exported,
# compiled and run against ONNX Runtime (tools/models/zoo.sh; not in make test).
ZOO_CONFIG ?= nv_small
zoo: deps all
	@sh tools/models/zoo.sh $(BUILD)/dlasim $(BUILD) $(ZOO_CONFIG)

# Timing pictures (docs/timing.md): per-layer plot and timeline of a trace;
# installs Debian's python3-matplotlib when missing (as root).
PLOT_CASE ?= $(CONFORMANCE)/nv_small/sdp_pdp_32x16x32_pass_through_int8_0/sdp_pdp_32x16x32_pass_through_int8_0.cfg
plot: all
	@/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || { [ "$$(id -u)" = 0 ] && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib >/dev/null; } || \
	    { echo "plot: needs python3-matplotlib (sudo apt-get install python3-matplotlib)"; exit 1; }
	$(BUILD)/dlasim trace --timing --json $(BUILD)/timing.json --timeline $(BUILD)/timeline.json \
	    --plot $(BUILD)/timing.png $(PLOT_CASE)

# Benchmarks (bench/): the public API only.  They see include/ and the
# register maps where `make install` puts them (dlasim/regs/), never src/,
# and link the public archive (tests/unit/bench_public.sh checks the sources).
BENCH_INC := $(BUILD)/public-include
BENCH_CFLAGS := $(CSTD) $(OPT) $(WARN) -Iinclude -I$(BENCH_INC) $(CFLAGS)
$(BENCH_INC)/dlasim/regs/%.h: src/regs/gen/%.h
	@mkdir -p $(dir $@)
	cp $< $@
BENCH_REGS := $(BENCH_INC)/dlasim/regs/nvdla_regs.h $(BENCH_INC)/dlasim/regs/rk3588_regs.h
$(BUILD)/conv_bench: bench/conv_bench.c bench/bench_rk.c bench/bench_rk.h $(BUILD)/libdlasim.a
	$(CC) $(BENCH_CFLAGS) $(LDFLAGS) -o $@ bench/conv_bench.c bench/bench_rk.c $(BUILD)/libdlasim.a $(LIB_DEPS)
$(filter-out $(BUILD)/conv_bench,$(BENCH_BIN)): $(BUILD)/%: bench/%.c $(BENCH_REGS) $(BUILD)/libdlasim.a
	$(CC) $(BENCH_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libdlasim.a $(LIB_DEPS)

clean:
	rm -rf build build-san build-fuzz build-arm64

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(UAPI_CORE_OBJ:.o=.d) $(patsubst %.c,$(BUILD)/obj/%.d,$(wildcard src/uapi/*.c)) $(TEST_COMMON_OBJ:.o=.d) $(TEST_BIN:=.d)
