# Tern: `make` builds everything, `make deps` installs what the build, the
# demo and the tests need, `make test` runs the test suite, `make demo` runs
# the main job, `make fuzz` runs the libFuzzer harnesses.  See README.md.
CC ?= gcc
ifeq ($(origin CC),default)
CC := gcc
endif

all: kernel programs iso

include kernel/Makefile.inc
include tests/programs/Makefile.inc
include boot/Makefile.inc
include portals/Makefile.inc
include libmsg/Makefile.inc
include libnx/Makefile.inc
include common/Makefile.inc
include libmpi/Makefile.inc
include service-node/Makefile.inc
include yod/Makefile.inc
include fyod/Makefile.inc
include bench/programs/Makefile.inc
include boot/linux-node/Makefile.inc
include tests/fuzz/Makefile.inc

kernel: build/tern.elf

deps:
	@tools/install-deps

# deps first, then the build: packages must be there before anything compiles.
# The build on every core: on CI's two it takes 43 s instead of 93 s.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
demo:
	@tools/install-deps
	$(MAKE) -j$(JOBS) all
	tools/demo

test:
	@tools/install-deps
	$(MAKE) -j$(JOBS) all
	python3 tests/run_suite.py $(TEST_ARGS)

# Also the parts marked run_slow (tests/conftest.py; none today).
test-slow:
	@tools/install-deps
	$(MAKE) -j$(JOBS) all
	python3 tests/run_suite.py --run-slow $(TEST_ARGS)

# Issue 8's benchmarks, Tern against Linux + MPICH (bench/run_all.py, docs/performance.md).
# BENCH_ARGS: e.g. --smoke, --reps 3, --only network.
bench:
	@tools/install-deps
	@bench/install-deps
	$(MAKE) -j$(JOBS) all linux-node
	python3 bench/run_all.py $(BENCH_ARGS)

clean:
	rm -rf build

.PHONY: test-slow all kernel deps demo test clean programs iso bench
