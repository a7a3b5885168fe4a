# dlasim — build, test, demo, bench.
#
#   make            library (build/libdlasim.a) and CLI (build/dlasim)
#   make demo       a Fashion-MNIST CNN (ONNX) compiled, calibrated and run on nv_small
#   make conformance  NVDLA's conformance traces as a readable table
#   make test       unit, device, property, conformance and fuzz tests, then
#                   the same under AddressSanitizer + UndefinedBehaviorSanitizer
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

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L
OPT     ?= -O2 -g
CFLAGS_ALL := $(CSTD) $(OPT) $(WARN) -Iinclude -Isrc -Itools/dlasim -I$(BUILD)/gen -MMD -MP $(CFLAGS)
LDLIBS  := -ljpeg -lpthread -lm

ifeq ($(SAN),1)
CFLAGS_ALL += -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
LDFLAGS    += -fsanitize=address,undefined
endif

LIB_SRC  := $(sort $(wildcard src/*/*.c src/*/*/*.c))
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

.PHONY: all demo conformance test test-fast test-san bench deps regs clean fuzz fuzz-long plot rtl-grade
all: $(BUILD)/dlasim

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(GEN)/onnx.pb-c.c: $(ONNX_PROTO)
	@mkdir -p $(GEN)
	cp $(ONNX_PROTO) $(GEN)/onnx.proto
	cd $(GEN) && protoc-c --c_out=. onnx.proto
$(GEN)/onnx.pb-c.h: $(GEN)/onnx.pb-c.c
$(ONNX_GEN_OBJ): $(GEN)/onnx.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(OPT) -I$(GEN) $(filter -fsanitize%,$(CFLAGS_ALL)) -c $< -o $@
$(BUILD)/obj/src/compiler/onnx_read.o: $(GEN)/onnx.pb-c.h

$(BUILD)/libdlasim.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/dlasim: $(CLI_OBJ) $(BUILD)/libdlasim.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libdlasim.a -lz -lmd $(PB_LIBS) $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(TEST_COMMON_OBJ) $(BUILD)/libdlasim.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests $(LDFLAGS) -o $@ $< $(TEST_COMMON_OBJ) $(BUILD)/libdlasim.a -lcmocka -lz $(PB_LIBS) $(LDLIBS)

$(BUILD)/tests/fuzz/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(BUILD)/libdlasim.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -I$(GEN) $(LDFLAGS) -o $@ $< tests/fuzz/replay.c $(BUILD)/libdlasim.a -lz $(PB_LIBS) $(LDLIBS)

tests: $(TEST_BIN) $(REPLAY_BIN) $(BUILD)/rtlgrade/convcase $(BUILD)/rtlgrade/imgcase

# Regenerate the register tables from the register database.
regs:
	python3 tools/regdb/gen_regs.py regdb/nvdla.xml src/regs/gen docs/registers.md
	python3 tools/regdb/gen_regs.py regdb/rk3588.xml src/regs/gen docs/registers-rk3588.md

deps:
	@sh tools/deps.sh

# The demo: a Fashion-MNIST CNN (models/fashion_mnist.onnx, trained by
# tools/models/train_fashion_mnist.py) compiled for nv_small, calibrated on
# training images, run on the 10,000 test images of Debian's
# dataset-fashion-mnist on the simulated device.
FMNIST  ?= /usr/share/datasets/fashion-mnist
demo: deps
	@$(MAKE) -s all
	@echo "dlasim demo: a Fashion-MNIST CNN (models/fashion_mnist.onnx) compiled for nv_small, calibrated"
	@echo "on 1,000 training images, run on the 10,000 test images on the simulated device and in float"
	@./$(BUILD)/dlasim run models/fashion_mnist.onnx --config nv_small \
	    --calib $(FMNIST)/train-images-idx3-ubyte.gz --calib-count 1000 \
	    --input $(FMNIST)/t10k-images-idx3-ubyte.gz --labels $(FMNIST)/t10k-labels-idx1-ubyte.gz \
	    --names models/fashion_mnist.names --compare-float --report --draw 4 --progress

# NVIDIA's conformance traces as a readable table.
conformance: deps
	@$(MAKE) -s all
	@./$(BUILD)/dlasim trace --suite $(CONFORMANCE)/nv_small --table --expect tests/traces/nv_small.expect

# One pass: build and run every kind of test in this BUILD.
test-fast: all tests
	@sh tests/run.sh $(BUILD) $(CONFORMANCE)

# Everything: plain build, ASan+UBSan build, fuzzing, generated-file check.
test: deps
	@sh tests/all.sh $(CONFORMANCE)

# libFuzzer targets (clang only): every tests/fuzz/fuzz_*.c (now the trace
# parser and player, CSB programming, loadables, RK3588 regcmd lists).
FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := $(CSTD) -O1 -g -Iinclude -Isrc -I$(GEN) -MMD -MP
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
.SECONDARY: $(FUZZ_NAMES:%=build-fuzz/obj/tests/fuzz/fuzz_%.o)
-include $(FUZZ_OBJ:.o=.d) $(FUZZ_NAMES:%=build-fuzz/obj/tests/fuzz/fuzz_%.d)

# A long campaign: each target for FUZZ_SECONDS and/or FUZZ_RUNS executions
# (whichever ends first; 600 s when neither is given), corpora kept in
# build-fuzz/corpus-NAME, logs and findings in build-fuzz/logs, artifacts.
FUZZ_SECONDS ?=
FUZZ_RUNS ?=
FUZZ_ONLY ?= $(FUZZ_NAMES)
# NVIDIA's regression loadables seed fuzz_loadable where the conformance data has them
FUZZ_EXTRA := $(foreach d,PDP SDP CDP,$(wildcard $(CONFORMANCE)/../nvdla-loadables/flatbufs/kmd/$(d)))
fuzz-long: deps fuzz
	@SUMMARY=1 sh tests/fuzz/run.sh --corpus keep --seed 0 $(FUZZ_EXTRA:%=--seeds loadable=%) \
	    $(if $(FUZZ_RUNS),--runs $(FUZZ_RUNS)) \
	    $(if $(FUZZ_SECONDS),--seconds $(FUZZ_SECONDS),$(if $(FUZZ_RUNS),,--seconds 600)) \
	    $(FUZZ_ONLY:%=build-fuzz/fuzz_%)

# RTL grading (tools/rtlgrade/README.md): regenerate the cases of
# tests/traces/rtl-graded and grade them on the nv_small RTL built at RTL.
RTL ?= /tmp/rtl
$(BUILD)/rtlgrade/convcase: tools/rtlgrade/convcase.c tools/rtlgrade/trace_out.c $(BUILD)/libdlasim.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< tools/rtlgrade/trace_out.c $(BUILD)/libdlasim.a -lz $(LDLIBS)
$(BUILD)/rtlgrade/imgcase: tools/rtlgrade/imgcase.c tools/rtlgrade/trace_out.c $(TEST_COMMON_OBJ) $(BUILD)/libdlasim.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests $(LDFLAGS) -o $@ $< tools/rtlgrade/trace_out.c $(TEST_COMMON_OBJ) $(BUILD)/libdlasim.a -lcmocka -lz $(LDLIBS)

rtl-grade: all $(BUILD)/rtlgrade/convcase $(BUILD)/rtlgrade/imgcase
	@sh tools/rtlgrade/rtl-grade.sh $(BUILD) $(RTL) $(SHARED)

bench: deps all $(BUILD)/runtime_bench $(BUILD)/model_bench $(BUILD)/kernel_peak
	@echo "== dlasim vs ONNX Runtime (bench/peer_bench.sh): ResNet-18/50, MobileNetV2, per image"
	@sh bench/peer_bench.sh $(BUILD)
	@echo; ./$(BUILD)/dlasim bench --json $(BUILD)/bench.json
	@echo; echo "== timing model vs the nv_small RTL: cycles_to_last_intr per case (docs/timing.md)"
	@./$(BUILD)/dlasim trace --suite $(CONFORMANCE)/nv_small --timing --expect tests/traces/nv_small.expect \
	    --rtl $(SHARED)/reference/rtl_cycles_nv_small.csv | grep -v '^PASS\|^FAIL' || true
	@echo; echo "== functional speed with the timing model on"
	@sh tools/timing/overhead.sh $(BUILD)/dlasim 4
	@echo; echo "== runtime: overhead over the device, dlasim loadable process time"
	@./$(BUILD)/runtime_bench $(BUILD)/dlasim $(SHARED)/conformance/nvdla-loadables
	@echo; echo "== ONNX compiler: Fashion-MNIST, ResNet-18, ResNet-50 on nv_small"
	@sh bench/onnx_bench.sh ./$(BUILD)/dlasim $(BUILD)

# Timing pictures (docs/timing.md): per-layer plot and timeline of a trace;
# installs Debian's python3-matplotlib when missing (as root).
PLOT_CASE ?= $(CONFORMANCE)/nv_small/sdp_pdp_32x16x32_pass_through_int8_0/sdp_pdp_32x16x32_pass_through_int8_0.cfg
plot: all
	@/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || { [ "$$(id -u)" = 0 ] && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib >/dev/null; } || \
	    { echo "plot: needs python3-matplotlib (sudo apt-get install python3-matplotlib)"; exit 1; }
	./$(BUILD)/dlasim trace --timing --json $(BUILD)/timing.json --timeline $(BUILD)/timeline.json \
	    --plot $(BUILD)/timing.png $(PLOT_CASE)

# dlasim's side of the peer comparison (bench/peer_bench.sh): public API only.
$(BUILD)/model_bench: bench/model_bench.c $(BUILD)/libdlasim.a
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< $(BUILD)/libdlasim.a -lz $(PB_LIBS) $(LDLIBS)

# int8 MAC peak and the convolution kernel on ResNet-50's layers (bench/kernel_peak.c).
$(BUILD)/kernel_peak: bench/kernel_peak.c $(BUILD)/libdlasim.a
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< $(BUILD)/libdlasim.a $(LDLIBS)

# Runtime numbers of issue 8 (bench/runtime_bench.c): public API only.
$(BUILD)/runtime_bench: bench/runtime_bench.c $(BUILD)/libdlasim.a
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< $(BUILD)/libdlasim.a -lz $(LDLIBS)

clean:
	rm -rf build build-san build-fuzz

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_COMMON_OBJ:.o=.d) $(TEST_BIN:=.d)
