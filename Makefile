# vnpu top-level Makefile.  `make demo` and `make check` are all a new user
# needs; each installs what is missing (scripts/deps.sh) and builds only
# what changed.  Everything built or downloaded lives under VNPU_CACHE.

VNPU_CACHE ?= $(HOME)/.cache/vnpu
VNPU_BUILD ?= $(VNPU_CACHE)/build
export VNPU_CACHE VNPU_BUILD

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
S := $(TOP)/scripts
QEMU := $(VNPU_CACHE)/qemu/build/qemu-system-x86_64
QEMU_BUILD := $(VNPU_CACHE)/qemu/build
GUEST := $(VNPU_BUILD)/guest
GUEST_BIN := $(GUEST)/bin
RESULTS := $(VNPU_BUILD)/results
KMOD := $(VNPU_BUILD)/kmod/kernel/vnpu.ko

# Components plug in through conventional Makefile targets (see README):
# `host-tests` builds test-* into $(O)/host-tests, `guest` installs t-*/b-*
# binaries into $(GUEST_BIN).
HOST_DIRS := $(patsubst %/Makefile,%,$(wildcard ops/Makefile libnpu/Makefile tests/host/*/Makefile \
	tests/onnx/Makefile python/Makefile))
GUEST_DIRS := $(patsubst %/Makefile,%,$(wildcard tests/guest/*/Makefile))

# VNPU_TESTS: run only these guest tests (a name no sub-make uses, since
# command-line variables reach every sub-make); GUEST_EXTRA_BIN: directories of
# ad-hoc guest binaries to add to the initramfs (debugging, experiments).
VNPU_TESTS ?=
GUEST_EXTRA_BIN ?=
GUEST_TIMEOUT ?= 1800
FUZZ_SECONDS ?= 20
FUZZ_SEED ?= 20261122
# check-fuzz: the host engine fuzzer's budget (both must be met).
FUZZ_ENGINE_SECONDS ?= 60
FUZZ_ENGINE_RUNS ?= 100000
FUZZ_O := $(VNPU_BUILD)/tests/fuzz
# check-fuzz: the ONNX importer's budget, seeded with Debian's ONNX test
# models and the real models' graphs.
FUZZ_ONNX_SECONDS ?= 30
FUZZ_ONNX_RUNS ?= 3000
ONNX_NODE_DATA ?= /usr/share/libonnx-testdata/data/node
# onnx-report-guest: every test the host passes, in one guest test.
ONNX_GUEST_TIMEOUT ?= 3600

# Sub-makes that compile run this many jobs at once (the layers themselves
# still run one after another; see run-host-tests.sh for the host tests).
BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
J := -j$(BUILD_JOBS)

# Every compiler the sub-makes run (cc, gcc, clang, kbuild's) goes through
# Debian's ccache (deps.sh installs it) with its cache under VNPU_CACHE, as
# QEMU's and the debug kernel's builds already do.  A clean clone's sources
# are all newer than the objects VNPU_BUILD keeps from the last run, so
# make recompiles everything; ccache, keyed on content, makes that a hit.
# The very first make on a fresh machine runs before deps.sh installed it
# and compiles without: nothing to reuse then anyway.  VNPU_CCACHE=0 turns
# it off.
VNPU_CCACHE ?= 1
export CCACHE_DIR ?= $(VNPU_CACHE)/ccache
ifeq ($(VNPU_CCACHE)$(wildcard /usr/lib/ccache/cc),1/usr/lib/ccache/cc)
ifeq ($(filter /usr/lib/ccache,$(subst :, ,$(PATH))),)
export PATH := /usr/lib/ccache:$(PATH)
endif
endif

Q := @

.PHONY: all deps qemu kernel module libnpu guest-bin initramfs \
	check check-host check-fuzz check-qtest check-kunit check-guest check-static \
	check-dkms check-deb check-debian-guest debian-guest-deps debian-guest-image run \
	check-debug debug-kernel debug-module debug-initramfs models models-initramfs \
	check-summary demo shell bench bench-deps fuzz onnx-report onnx-report-guest clean-results help

all: qemu module initramfs

help:
	@sed -n 's/^## //p' $(TOP)/README

deps:
	$(Q)$(S)/deps.sh

## qemu: fetch Debian's QEMU 7.2 source, add qemu-device/ and build it
qemu: deps
	$(Q)$(S)/qemu.sh

kernel: deps
	$(Q)$(S)/kernel.sh >/dev/null

module: kernel
	$(Q)$(S)/kmod.sh $(KBUILD_ARGS) >$(VNPU_BUILD)/kmod.log 2>&1 || { cat $(VNPU_BUILD)/kmod.log; exit 1; }

libnpu: deps
	$(Q)if [ -f libnpu/Makefile ]; then $(MAKE) $(J) -s -C libnpu O=$(VNPU_BUILD)/libnpu; fi

guest-bin: deps libnpu
	$(Q)rm -rf $(GUEST_BIN) && mkdir -p $(GUEST_BIN)
	$(Q)set -e; for d in $(GUEST_DIRS); do \
		$(MAKE) $(J) -s -C $$d guest O=$(VNPU_BUILD)/$$d GUEST_BIN=$(GUEST_BIN) \
			LIBNPU_O=$(VNPU_BUILD)/libnpu; \
	done
	$(Q)if [ -f libnpu/Makefile ]; then $(MAKE) $(J) -s -C libnpu guest O=$(VNPU_BUILD)/libnpu GUEST_BIN=$(GUEST_BIN); fi

initramfs: module guest-bin
	$(Q)krel=$$($(S)/kernel.sh) && $(S)/mkinitramfs.py \
		--kroot $(VNPU_CACHE)/kernel/$$krel/root --krel $$krel \
		--ko $(KMOD) --bin $(GUEST_BIN) $(foreach d,$(GUEST_EXTRA_BIN),--bin $(d)) \
		--init tests/guest/init.sh \
		-o $(GUEST)/initramfs.cpio.gz

# The real models and their references (make models), as a data archive
# for the guest's /models.  Only the boots that run them (check-guest, demo)
# get it, put in front of the base initramfs in one initrd: the kernel
# unpacks concatenated archives in turn.  It is uncompressed (the weights
# barely compress; the guest unpacks it as fast either way) and rebuilt only
# when something under $(MODELS_DIR) changed (Documentation/platform.rst),
# or the list of directories did: files fetched before the list named them
# are older than the archive.
MODELS_DIR := $(VNPU_CACHE)/models
MODELS_DATA := $(GUEST)/models-data.cpio
MODELS_INITRD := $(GUEST)/initramfs-models.img
MODELS_DATA_DIRS := blazeface ppocr vad yolo images audio ref qdq int8
# check-guest needs the models unless VNPU_TESTS picks no test that reads
# them (t-model-*, t-multi-pipeline*).
GUEST_WANTS_MODELS := $(if $(VNPU_TESTS),$(filter t-model-% t-multi-pipeline%,$(VNPU_TESTS)),yes)

models-initramfs: models initramfs
	$(Q)if [ ! -f $(MODELS_DATA) ] || [ $(S)/mkinitramfs.py -nt $(MODELS_DATA) ] || \
	    [ "$$(cat $(MODELS_DATA).dirs 2>/dev/null)" != "$(MODELS_DATA_DIRS)" ] || \
	    [ -n "$$(find $(addprefix $(MODELS_DIR)/,$(MODELS_DATA_DIRS)) -newer $(MODELS_DATA) | head -n 1)" ]; then \
		$(S)/mkinitramfs.py --compress none \
			$(foreach d,$(MODELS_DATA_DIRS),--data models/$(d)=$(MODELS_DIR)/$(d)) \
			-o $(MODELS_DATA) && \
		echo "$(MODELS_DATA_DIRS)" > $(MODELS_DATA).dirs; \
	fi
	$(Q)cat $(MODELS_DATA) $(GUEST)/initramfs.cpio.gz > $(MODELS_INITRD).tmp && \
		mv $(MODELS_INITRD).tmp $(MODELS_INITRD)

GUEST_BOOT = krel=$$($(S)/kernel.sh) && $(S)/guest-run.py --qemu $(QEMU) \
	--kernel $(VNPU_CACHE)/kernel/$$krel/root/boot/vmlinuz-$$krel
GUEST_RUN = $(GUEST_BOOT) --initrd $(GUEST)/initramfs.cpio.gz
GUEST_RUN_MODELS = $(GUEST_BOOT) --initrd $(MODELS_INITRD)

## check: every test layer; ends with one "N passed, N failed, N skipped"
## line, after the skips and expected failures listed by reason
# One line per layer says where a long run is (step counter, elapsed
# time); a failing layer does not stop the others (like make -k).
# CHECK_SKIP leaves layers out.  Each layer writes $(RESULTS)/LAYER.tap
# and may add LAYER-*.tap; the summary sums them all.  A layer whose make
# fails while its TAP shows no failure gets LAYER-make.tap saying so, so
# the summary and the exit status always agree.
#
# The debug kernel layer takes about a third of the time, and its guest is
# one TCG thread, so on a host with two or more cores it runs alongside the
# others (CHECK_DEBUG_ALONGSIDE=0: after them), in a build directory of its
# own ($(DEBUG_BUILD): its guest binaries, module and initramfs are its
# own), its output in a log printed when it ends.  What both would build
# (packages, QEMU, the debug kernel) is built first.
CHECK_LAYERS := host fuzz qtest kunit guest debug static dkms deb debian-guest
CHECK_SKIP ?=
CHECK_RUN := $(filter-out $(CHECK_SKIP),$(CHECK_LAYERS))
CHECK_DEBUG_ALONGSIDE ?= $(if $(filter 1,$(BUILD_JOBS)),0,1)
DEBUG_ALONGSIDE := $(if $(filter 1,$(CHECK_DEBUG_ALONGSIDE)),$(filter debug,$(CHECK_RUN)))
CHECK_IN_TURN := $(if $(DEBUG_ALONGSIDE),$(filter-out debug,$(CHECK_RUN)),$(CHECK_RUN))
DEBUG_BUILD := $(VNPU_BUILD)-debug
check: clean-results
	$(Q)rc=0; i=0; start=$$(date +%s); \
	if [ -n "$(DEBUG_ALONGSIDE)" ]; then \
		echo "[vnpu] check: first what the debug layer shares (packages, QEMU, the debug kernel)"; \
		$(MAKE) --no-print-directory deps qemu debug-kernel || rc=1; \
		rm -rf $(DEBUG_BUILD)/results && mkdir -p $(DEBUG_BUILD); \
		echo "[vnpu] check: debug runs alongside the others (log: $(DEBUG_BUILD)/check-debug.log)"; \
		{ $(MAKE) --no-print-directory check-debug VNPU_BUILD=$(DEBUG_BUILD) \
			>$(DEBUG_BUILD)/check-debug.log 2>&1; echo $$? >$(DEBUG_BUILD)/check-debug.rc; } & \
		debug_pid=$$!; \
	fi; \
	for l in $(CHECK_IN_TURN); do \
		i=$$((i + 1)); t=$$(( $$(date +%s) - start )); \
		printf '[vnpu] check %d/%d: %s (%dm%02ds elapsed)\n' $$i $(words $(CHECK_IN_TURN)) \
			$$l $$((t / 60)) $$((t % 60)); \
		if ! $(MAKE) --no-print-directory check-$$l; then \
			rc=1; \
			$(S)/tap-summary.py $(RESULTS) $$l >/dev/null && \
			printf 'TAP version 13\n1..1\nnot ok 1 - make check-%s failed with no failing TAP line (see its output)\n' \
				$$l >$(RESULTS)/$$l-make.tap; \
		fi; \
	done; \
	if [ -n "$(DEBUG_ALONGSIDE)" ]; then \
		t=$$(( $$(date +%s) - start )); \
		printf '[vnpu] check: waiting for debug (%dm%02ds elapsed)\n' $$((t / 60)) $$((t % 60)); \
		wait $$debug_pid; \
		echo "[vnpu] check: debug's output:"; cat $(DEBUG_BUILD)/check-debug.log; \
		cp $(DEBUG_BUILD)/results/debug.tap $(RESULTS)/ 2>/dev/null; \
		if [ "$$(cat $(DEBUG_BUILD)/check-debug.rc 2>/dev/null)" != 0 ]; then \
			rc=1; \
			$(S)/tap-summary.py $(RESULTS) debug >/dev/null && \
			printf 'TAP version 13\n1..1\nnot ok 1 - make check-debug failed with no failing TAP line (see its output)\n' \
				>$(RESULTS)/debug-make.tap; \
		fi; \
	fi; \
	t=$$(( $$(date +%s) - start )); \
	printf '[vnpu] check: all layers ran in %dm%02ds\n' $$((t / 60)) $$((t % 60)); \
	$(S)/tap-summary.py $(RESULTS) $(CHECK_RUN) || rc=1; exit $$rc

clean-results:
	$(Q)rm -rf $(RESULTS) && mkdir -p $(RESULTS)

# Exits 1 when the summary counts a failure.
check-summary:
	$(Q)$(S)/tap-summary.py $(RESULTS) $(CHECK_RUN)

## models: fetch the real models and test images (pinned, sha256-checked,
## cached in $VNPU_CACHE/models) and compute onnxruntime's reference outputs
models: deps
	$(Q)$(S)/models.sh
	$(Q)$(MAKE) -s -C tests/models refs O=$(VNPU_BUILD)/tests/models MODELS=$(VNPU_CACHE)/models

## check-host: unit tests on the host, under ASan/UBSan
check-host: deps models
	$(Q)mkdir -p $(RESULTS)
	$(Q)set -e; for d in $(HOST_DIRS); do \
		$(MAKE) $(J) -s -C $$d host-tests O=$(VNPU_BUILD)/$$d; \
	done
	$(Q)$(S)/run-host-tests.sh $(RESULTS)/host.tap $(foreach d,$(HOST_DIRS),$(VNPU_BUILD)/$(d)/host-tests) \
		$(TOP)/tests/harness $(TOP)/bench

## check-fuzz: the compute engine and the ONNX importer under libFuzzer +
## ASan/UBSan (tests/fuzz): the regression inputs, then fixed-seed runs of
## FUZZ_ENGINE_SECONDS / FUZZ_ONNX_SECONDS and at least FUZZ_ENGINE_RUNS /
## FUZZ_ONNX_RUNS executions (the importer seeded with Debian's ONNX test
## models and the real models' graphs)
check-fuzz: deps
	$(Q)mkdir -p $(RESULTS)
	$(Q)$(MAKE) $(J) -s -C tests/fuzz host-tests O=$(FUZZ_O)
	$(Q)rc=0; $(S)/run-fuzz.sh $(RESULTS)/fuzz.tap $(FUZZ_O) $(FUZZ_ENGINE_SECONDS) \
		$(FUZZ_ENGINE_RUNS) $(FUZZ_SEED) || rc=1; \
	FUZZ_EXTRA_SEEDS=$(ONNX_NODE_DATA) $(S)/run-fuzz.sh $(RESULTS)/fuzz-onnx.tap $(FUZZ_O) \
		$(FUZZ_ONNX_SECONDS) $(FUZZ_ONNX_RUNS) $(FUZZ_SEED) onnx || rc=1; exit $$rc

## check-qtest: the device model under QEMU's qtest framework, no guest
check-qtest: qemu
	$(Q)mkdir -p $(RESULTS)
	$(Q)$(S)/run-qtests.sh $(RESULTS)/qtest.tap $(FUZZ_SECONDS) $(FUZZ_SEED)

## check-kunit: driver logic under KUnit (kunit.py on UML)
check-kunit: deps
	$(Q)mkdir -p $(RESULTS)
	$(Q)$(S)/kunit.sh $(RESULTS)/kunit.tap

## check-guest: boot Debian's 6.12 kernel with vnpu.ko and run the guest tests
# The t-multi-* tests get a second boot with two devices; VNPU_DEVICES=N,
# read by scripts/guest-run.py, sets the device count of any boot
# (check-guest, run, shell: Documentation/multi-device.rst).
# The stock kernel has no fault injection (failslab, fail_page_alloc):
# t-drv-failinject runs in check-debug only.
GUEST_EXCLUDE := --exclude 't-drv-failinject=needs failslab/fail_page_alloc, which only the debug kernel has (make check-debug runs it)'
check-guest: qemu initramfs $(if $(GUEST_WANTS_MODELS),models-initramfs)
	$(Q)mkdir -p $(RESULTS)
	$(Q)$(if $(GUEST_WANTS_MODELS),$(GUEST_RUN_MODELS),$(GUEST_RUN)) $(GUEST_EXCLUDE) \
		--log $(GUEST)/console-check.log --results $(RESULTS)/guest.tap \
		--timeout $(GUEST_TIMEOUT) $(if $(VNPU_TESTS),--tests $(VNPU_TESTS))

## check-debug: the guest suite on a debug kernel built from linux-source-6.12
## (lockdep, KASAN, kmemleak, DMA-API debug, debug objects, fault injection),
## then a kmemleak scan
DEBUG_KCACHE := $(VNPU_CACHE)/debug-kernel
DEBUG_KMOD := $(VNPU_BUILD)/kmod-debug/kernel/vnpu.ko
DEBUG_GUEST_TIMEOUT ?= 7200
DEBUG_TEST_TIMEOUT ?= 1800
# One in this many of the guest layer's ONNX backend tests (t-onnx-backend):
# on the debug kernel each costs ~1.3 s instead of ~0.1 s, and a sample
# takes the driver through the same paths.
DEBUG_ONNX_EVERY ?= 5

debug-kernel: deps
	$(Q)$(S)/debug-kernel.sh >/dev/null

debug-module: debug-kernel
	$(Q)VNPU_KDIR=$(DEBUG_KCACHE)/build VNPU_KMOD_OUT=$(VNPU_BUILD)/kmod-debug \
		$(S)/kmod.sh $(KBUILD_ARGS) >$(VNPU_BUILD)/kmod-debug.log 2>&1 || \
		{ cat $(VNPU_BUILD)/kmod-debug.log; exit 1; }

debug-initramfs: debug-module guest-bin
	$(Q)krel=$$($(S)/debug-kernel.sh) && $(S)/mkinitramfs.py \
		--kroot $(DEBUG_KCACHE)/root --krel $$krel \
		--ko $(DEBUG_KMOD) --bin $(GUEST_BIN) --bin $(TOP)/tests/guest/debug \
		$(foreach d,$(GUEST_EXTRA_BIN),--bin $(d)) \
		--init tests/guest/init.sh \
		-o $(GUEST)/initramfs-debug.cpio.gz

# The debug boot's initrd has no /models (the models-data archive is
# appended only for check-guest, demo and bench), so t-model-* are left
# out of this layer rather than skipping on every run, and so is
# t-multi-pipeline.sh, which splits a real model over two devices.
DEBUG_EXCLUDE := --exclude 't-model-*=the debug initramfs has no /models (make check-guest runs the models)' \
	--exclude 't-multi-pipeline*=the debug initramfs has no /models (make check-guest runs it)'
check-debug: qemu debug-initramfs
	$(Q)mkdir -p $(RESULTS)
	$(Q)$(S)/guest-run.py --qemu $(QEMU) --name debug $(DEBUG_EXCLUDE) \
		--append vnpu.onnx=every:$(DEBUG_ONNX_EVERY) \
		--kernel $(DEBUG_KCACHE)/build/arch/x86/boot/bzImage \
		--initrd $(GUEST)/initramfs-debug.cpio.gz \
		--log $(GUEST)/console-debug.log --results $(RESULTS)/debug.tap \
		--timeout $(DEBUG_GUEST_TIMEOUT) --test-timeout $(DEBUG_TEST_TIMEOUT) \
		$(if $(VNPU_TESTS),--tests $(VNPU_TESTS) t-zzz-kmemleak.sh)

## check-static: checkpatch --strict, sparse (C=2) and W=1 on the driver
check-static: kernel
	$(Q)mkdir -p $(RESULTS)
	$(Q)$(S)/static.sh $(RESULTS)/static.tap

## check-dkms: build and install vnpu.ko with DKMS against the cached Debian
## 6.12 headers, in scratch DKMS and module trees
check-dkms: kernel
	$(Q)mkdir -p $(RESULTS)
	$(Q)$(S)/dkms-test.sh $(RESULTS)/dkms.tap

## check-deb: build the Debian packages (debian/) from a copy of the tree,
## lintian them, and build the libnpu tutorial against the unpacked
## libnpu-dev; the packages stay in $(VNPU_BUILD)/deb
check-deb: kernel
	$(Q)mkdir -p $(RESULTS)
	$(Q)$(S)/deb-test.sh $(RESULTS)/deb.tap

## check-debian-guest: boot a Debian userspace (bookworm, built with
## mmdebstrap, cached by its package list) with the device, dpkg -i the
## packages of check-deb, build vnpu.ko there with DKMS, run the packaged
## npu-info and npu-run and python3-npu's tests on the device; then make
## run and make shell as a user runs them (tests/run)
# The packages are check-deb's (which `make check` runs just before).
DEBIAN_GUEST_TIMEOUT ?= 3600
debian-guest-deps:
	$(Q)$(S)/deps.sh debian-guest

debian-guest-image: debian-guest-deps kernel
	$(Q)$(S)/debian-guest-image.sh >/dev/null

# check-deb's packages, built again when there are none or the sources
# they are made of changed since (make check runs check-deb just before).
DEBS_BUILT = deb=$$(ls -t $(VNPU_BUILD)/deb/vnpu-dkms_*.deb 2>/dev/null | head -n 1); \
	if [ -z "$$deb" ] || [ -n "$$(find debian include kernel libnpu python -newer "$$deb" \
		-type f | head -n 1)" ]; then $(MAKE) --no-print-directory check-deb; fi
check-debian-guest: qemu models debian-guest-image
	$(Q)mkdir -p $(RESULTS)
	$(Q)$(DEBS_BUILT)
	$(Q)DEBIAN_GUEST_TIMEOUT=$(DEBIAN_GUEST_TIMEOUT) $(S)/debian-guest-test.sh $(RESULTS)/debian-guest.tap
	$(Q)$(TOP)/tests/run/test-vnpu-run.py $(RESULTS)/debian-guest-run.tap

## demo: boot the guest and show the stack running: the MLP self-check,
## then BlazeFace and PP-OCR on real images; the annotated images land in
## $(VNPU_BUILD)/demo.  Last, the Debian guest runs Documentation/python.rst's
## BlazeFace example with the python3-npu package of check-deb, on the device
demo: qemu models-initramfs debian-guest-image
	$(Q)rm -rf $(VNPU_BUILD)/demo
	$(Q)$(GUEST_RUN_MODELS) --mode demo --log $(GUEST)/console-demo.log --timeout 1200 \
		--out-dir $(VNPU_BUILD)/demo
	$(Q)$(DEBS_BUILT)
	$(Q)$(S)/debian-guest-demo.sh

## run: boot the guest, run CMD on the device in the directory make was
## started from (RUN_DIR), print its output and exit with its status;
## shell: the same guest and directory, interactively ('exit' to leave);
## RUN_QEMU_ARGS: more QEMU arguments, e.g. trace events:
## RUN_QEMU_ARGS='-msg timestamp=on -trace vnpu_job_* -D /tmp/trace.log'
# The directory goes in as an ext4 image and what the command wrote comes
# back after it (scripts/vnpu-run.py says why not virtio-9p).  PWD is the
# invoking shell's directory, which make -C leaves alone.
RUN_DIR ?= $(or $(PWD),$(CURDIR))
RUN_TIMEOUT ?= 3600
VNPU_RUN = krel=$$($(S)/kernel.sh) && $(S)/vnpu-run.py --qemu $(QEMU) \
	--kernel $(VNPU_CACHE)/kernel/$$krel/root/boot/vmlinuz-$$krel \
	--kroot $(VNPU_CACHE)/kernel/$$krel/root --krel $$krel \
	--initrd $(GUEST)/initramfs.cpio.gz --init $(TOP)/tests/debian-guest/run-init.sh \
	--dir "$(RUN_DIR)" --work $(GUEST)/run --timeout $(RUN_TIMEOUT) \
	$(if $(RUN_QEMU_ARGS),--qemu-arg "$(RUN_QEMU_ARGS)")

run: export VNPU_RUN_CMD = $(value CMD)
run: qemu initramfs debian-guest-deps
	$(Q)$(VNPU_RUN) --log $(GUEST)/console-run.log -- "$$VNPU_RUN_CMD"

shell: qemu initramfs debian-guest-deps
	$(Q)$(VNPU_RUN) --log /dev/null --shell

## bench: benchmarks on the host and in the guest (the engine, job
## latency, the real models against onnxruntime), ending with every ratio
## against its goal and a chart of them, $(VNPU_BUILD)/bench/ratios.png
## (Documentation/bench.rst)
# Each part's log goes to $(BENCH_O); a part that fails does not stop the
# others, and scripts/bench-summary.py names what is missing (then bench
# fails).  BENCH_ITERATIONS: onnxruntime's and the CPU path's timed runs
# per model on the host (the guest's are set in tests/guest/models/b-model.sh).
BENCH_O := $(VNPU_BUILD)/bench
BENCH_MODELS := blazeface-front blazeface-back ppocr-det ppocr-cls ppocr-rec
BENCH_MODELS_INFO := ppocr-cls ppocr-rec
BENCH_ITERATIONS ?= 20

bench-deps:
	$(Q)$(S)/deps.sh bench

bench: bench-deps qemu models-initramfs
	$(Q)rm -rf $(BENCH_O) && mkdir -p $(BENCH_O)
	$(Q)rc=0; \
	echo "[vnpu] bench 1/4: the compute engine on the host (bench/ops)"; \
	if [ -f ops/Makefile ]; then \
		{ $(MAKE) -s -C ops bench O=$(VNPU_BUILD)/ops || echo "bench: host engine benchmark failed"; } \
			2>&1 | tee $(BENCH_O)/host-ops.log; \
	fi; \
	echo "[vnpu] bench 2/4: the real models on the host: onnxruntime with 1 and 2 threads, and npu-run --cpu, outputs checked"; \
	{ $(S)/bench-host-models.sh $(VNPU_BUILD)/libnpu/bin/npu-run $(BENCH_ITERATIONS) $(BENCH_MODELS) || \
		echo "bench: a host model run failed"; } 2>&1 | tee $(BENCH_O)/host-models.log; \
	echo "[vnpu] bench 3/4: the guest (npu-bench, the real models on the device; two devices, for the two-device ratios)"; \
	$(GUEST_RUN_MODELS) --devices 2 --mode bench --log $(BENCH_O)/console-bench.log --results $(BENCH_O)/bench.tap \
		--echo --timeout $(GUEST_TIMEOUT) || rc=1; \
	echo "[vnpu] bench 4/4: summary"; \
	$(S)/bench-summary.py --out-dir $(BENCH_O) \
		$(if $(wildcard ops/Makefile),--part host-engine=$(BENCH_O)/host-ops.log) \
		--part guest=$(BENCH_O)/console-bench.log --expect null-job-vs-raw-irq \
		--host-models $(BENCH_O)/host-models.log --guest $(BENCH_O)/console-bench.log \
		--models $(BENCH_MODELS) --informational $(BENCH_MODELS_INFO) || rc=1; \
	exit $$rc

## onnx-report: run all 1,072 ONNX backend tests of libonnx-testdata through
## npu-run on the host CPU path and regenerate Documentation/onnx-conformance.rst
## (pass counts against onnxruntime's, per op, every failure with its reason)
onnx-report: deps
	$(Q)$(MAKE) -s -C tests/onnx report O=$(VNPU_BUILD)/tests/onnx LIBNPU_O=$(VNPU_BUILD)/libnpu

## onnx-report-guest: the same page from the guest (t-onnx-backend over every
## test the host passes, on the device), with the device/CPU split per op
# A failing test still belongs in the report: the page lists it.
onnx-report-guest: qemu initramfs
	$(Q)$(GUEST_RUN) --tests t-onnx-backend --append vnpu.onnx=all \
		--test-timeout $(ONNX_GUEST_TIMEOUT) --timeout $$(($(ONNX_GUEST_TIMEOUT) + 300)) \
		--log $(GUEST)/console-onnx.log --results $(GUEST)/onnx.tap >/dev/null || true
	$(Q)$(MAKE) -s -C tests/onnx report O=$(VNPU_BUILD)/tests/onnx GUEST_LOG=$(GUEST)/console-onnx.log

## fuzz: the long fuzz runs, FUZZ_SECONDS (600 by default here) each: the
## device through qtest, and the host engine fuzzer, which keeps what it
## finds in $(FUZZ_O)/corpus across runs
FUZZ_LONG = $(if $(filter command line,$(origin FUZZ_SECONDS)),$(FUZZ_SECONDS),600)
fuzz: qemu
	$(Q)$(MAKE) $(J) -s -C tests/fuzz host-tests O=$(FUZZ_O)
	$(Q)rc=0; mkdir -p $(FUZZ_O)/corpus; \
	FUZZ_CORPUS_DIR=$(FUZZ_O)/corpus $(S)/run-fuzz.sh $(VNPU_BUILD)/fuzz-engine.tap \
		$(FUZZ_O) $(FUZZ_LONG) $(FUZZ_ENGINE_RUNS) $(FUZZ_SEED) || rc=1; \
	mkdir -p $(FUZZ_O)/corpus-onnx; \
	FUZZ_CORPUS_DIR=$(FUZZ_O)/corpus-onnx FUZZ_EXTRA_SEEDS=$(ONNX_NODE_DATA) \
		$(S)/run-fuzz.sh $(VNPU_BUILD)/fuzz-onnx.tap $(FUZZ_O) $(FUZZ_LONG) \
		$(FUZZ_ONNX_RUNS) $(FUZZ_SEED) onnx || rc=1; \
	$(S)/run-qtests.sh $(VNPU_BUILD)/fuzz.tap $(FUZZ_LONG) $(FUZZ_SEED) fuzz-only || rc=1; \
	exit $$rc
