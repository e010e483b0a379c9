# Thin wrapper over CMake + CTest. The two commands of the README:
#   make bench   builds Release and runs the main job (`gdn bench`, default suite)
#   make test    builds Release and runs every test through CTest
# Also: make test-sanitize (whole suite under AddressSanitizer + UBSan), make install PREFIX=...,
# make test-tsan (threads under ThreadSanitizer), make check (the conformance suite through the tool),
# make clean.

BUILD      ?= build
BUILD_SAN  ?= build-sanitize
BUILD_TSAN ?= build-tsan
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE      ?= cmake

.PHONY: all build bench test test-sanitize test-tsan check install clean deps

all: build

deps:
	@command -v $(CMAKE) >/dev/null 2>&1 && command -v cc >/dev/null 2>&1 || ./.ci/deps

$(BUILD)/CMakeCache.txt: | deps
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX)

build: $(BUILD)/CMakeCache.txt
	$(CMAKE) --build $(BUILD) -j $(JOBS)

bench: build
	./$(BUILD)/gdn bench

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

check: build
	./$(BUILD)/gdn check

test-sanitize: | deps
	$(CMAKE) -S . -B $(BUILD_SAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGDN_SANITIZE=address,undefined -DGDN_CUDA=OFF
	$(CMAKE) --build $(BUILD_SAN) -j $(JOBS)
	cd $(BUILD_SAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j $(JOBS)

# The thread pool and the multi-threaded driver under ThreadSanitizer (every ISA, 1..7 threads,
# two contexts used at once).
test-tsan: | deps
	$(CMAKE) -S . -B $(BUILD_TSAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGDN_SANITIZE=thread -DGDN_BUILD_TOOLS=OFF -DGDN_CUDA=OFF
	$(CMAKE) --build $(BUILD_TSAN) -j $(JOBS) --target test_threads test_conv1d
	TSAN_OPTIONS=halt_on_error=1 ./$(BUILD_TSAN)/tests/test_threads
	TSAN_OPTIONS=halt_on_error=1 ./$(BUILD_TSAN)/tests/test_conv1d

install: build
	$(CMAKE) --install $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_TSAN)
