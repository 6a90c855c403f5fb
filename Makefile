# seg6x: `make demo` runs the lab demo, `make test` runs every test. Both install what they need.
export PATH := /usr/local/go/bin:$(PATH)
GO ?= go
BIN := bin/seg6x
# The project's tools, apart from the product binary: the namespace labs and the benchmarks.
LAB := bin/seg6x-lab
BENCH := bin/seg6x-bench
BPF_SRC := $(wildcard bpf/*.c bpf/*.h)

.PHONY: all deps generate plugins build install deb test test-unit demo demo-usid demo-fabric demo-bgp bench bench-micro fixtures fuzz lint clean proto

all: build

# What everything here needs (scripts/deps.sh: each target installs only its own part when missing).
deps:
	@scripts/deps.sh test lint

# bpf2go: compiles the BPF C with clang and writes Go bindings (types generated from the C structs):
# the product programs (bpf/ into internal/dataplane), and from tools/bpf/ the benchmark rig's
# (tools/benchrig/rigbpf), the lab's access ports (tools/lab/accessbpf) and its GSO observer
# (tools/lab/gsoprobe). clang needs this architecture's kernel headers (asm/...) beside the generic
# ones: BPF_CFLAGS, which the //go:generate lines pass to bpf2go, names their multiarch directory.
MULTIARCH ?= $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo $$(uname -m)-linux-gnu)
BPF_CFLAGS ?= -I/usr/include/$(MULTIARCH)
export BPF_CFLAGS
generate:
	@scripts/deps.sh build
	$(GO) generate ./internal/dataplane/ ./tools/benchrig/rigbpf/ ./tools/lab/accessbpf/ ./tools/lab/gsoprobe/

# What `seg6x version` says (internal/buildinfo): the commit (-dirty: the work tree had changes), the
# build time, and the release: a tagged commit's tag, else the one in buildinfo.go.
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
VERSION ?= $(shell git describe --tags --exact-match 2>/dev/null)
LDFLAGS = -X github.com/seg6x/seg6x/internal/buildinfo.Commit=$(COMMIT) -X github.com/seg6x/seg6x/internal/buildinfo.BuildDate=$(BUILD_DATE) \
	$(if $(VERSION),-X github.com/seg6x/seg6x/internal/buildinfo.Version=$(VERSION))

# The shipped plugins (plugins/*.c: operators' SRv6 functions, built against the SDK in bpf/sdk the
# way an operator builds their own) into bin/plugins/*.o; docs/plugins.md.
PLUGIN_SRC := $(wildcard plugins/*.c)
plugins:
	@scripts/deps.sh build
	@mkdir -p bin/plugins
	@for f in $(PLUGIN_SRC); do \
		clang -O2 -g -Wall -Werror -target bpf $(BPF_CFLAGS) -Ibpf/sdk -c $$f -o bin/plugins/$$(basename $$f .c).o || exit 1; \
	done

# The product (bin/seg6x) and the tools (bin/seg6x-lab, bin/seg6x-bench), which run the seg6x beside them.
# One go build for the three commands (bin/seg6x, bin/seg6x-lab, bin/seg6x-bench): linked in parallel.
build: generate plugins
	@mkdir -p bin
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/seg6x ./cmd/seg6x-lab ./cmd/seg6x-bench

# Install the binary, the systemd unit, a default /etc/seg6x/seg6x.yaml (an existing one is kept),
# man pages, bash/zsh/fish completions and the docs under $(DESTDIR)$(PREFIX); `make deb` puts the
# same, under /usr, into bin/seg6x_<version>_<arch>.deb. scripts/package.sh; docs/install.md.
PREFIX ?= /usr/local
install: build
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" BIN="$(BIN)" scripts/package.sh install

deb: build
	BIN="$(BIN)" scripts/package.sh deb

# Unit, packet (BPF_PROG_TEST_RUN), verifier and namespace-lab integration tests. Needs root.
# The suites run the binaries just built (SEG6X_TEST_BINDIR) instead of linking their own per test.
# The suites of test/ that count no frames (BGP against ExaBGP; the docs' examples run as written;
# the Debian package installed, checked and purged): they may share the CPUs with other packages.
TEST_SHARED := ./test/interop ./test/docs ./test/package
test: build
	@scripts/deps.sh test
	$(GO) vet ./...
	# First, two at a time, the packages that build no namespace rig counting frames: those outside
	# test/ (BPF maps, program test runs, BGP speakers, small namespaces) and TEST_SHARED.
	SEG6X_TEST_BINDIR=$(CURDIR)/bin $(GO) test -count=1 -p 2 -timeout 15m \
		$$($(GO) list ./... | grep -v '/test/') $(TEST_SHARED)
	# Then the rest of test/, one package at a time (-p 1). Its namespace rigs pin threads at
	# real-time priority and count every frame; sharing the two CPUs with another package's rig would
	# make them measure each other.
	SEG6X_TEST_BINDIR=$(CURDIR)/bin $(GO) test -count=1 -p 1 -timeout 15m \
		$$($(GO) list ./test/... | grep -v -x -F $(TEST_SHARED:./%=-e github.com/seg6x/seg6x/%))

# The tests that need no root, with the race detector, in every package but the root suites of
# test/ (namespace rigs, each of which needs root throughout): quick feedback for any user. Tests
# that need root skip themselves (testsupport.NeedRoot), as root too: SEG6X_TEST_UNIT=1 says so,
# so the run is the same for every user. Needs no build (the BPF bindings are committed) and no root.
test-unit:
	@scripts/deps.sh unit
	@start=$$(date +%s); \
	SEG6X_TEST_UNIT=1 $(GO) test -race -count=1 -timeout 10m $$($(GO) list ./... | grep -v '^github.com/seg6x/seg6x/test/'); rc=$$?; \
	echo "test-unit: $$(( $$(date +%s) - start )) s"; exit $$rc

# One million generated and mutated frames through the real program, each checked by the output
# oracle (test/fuzz, tools/pktcheck); prints the rate and the counts per action and reason.
# `make test` runs a slice of 50000. FUZZ_SEED picks another fixed sequence.
FUZZ_FRAMES ?= 1000000
FUZZ_SEED ?= 1
fuzz: build
	@scripts/deps.sh test
	SEG6X_FUZZ_FRAMES=$(FUZZ_FRAMES) SEG6X_FUZZ_SEED=$(FUZZ_SEED) $(GO) test -count=1 -v -timeout 60m -run TestFuzzFrames ./test/fuzz/

demo: build
	@scripts/deps.sh demo
	./$(LAB) demo

# The same lab over uSID containers: uN at the transit node, uDT4/uDT6 at the PEs.
demo-usid: build
	@scripts/deps.sh demo
	./$(LAB) demo --usid

# The same lab on a jumbo fabric: two parallel 9000-byte uplinks per hop (ECMP), tenant A at 9000.
demo-fabric: build
	@scripts/deps.sh demo
	./$(LAB) demo --fabric

# The BGP lab: three PEs learn each other's tenant prefixes from a route reflector (FRR's bgpd; --rr
# gobgpd for the packaged gobgpd), traffic for both tenants, one PE stopped and started again.
demo-bgp: build
	@scripts/deps.sh demo
	./$(LAB) demo --bgp

bench-micro: build
	./$(BENCH) micro

# Quick throughput subset (< 10 min): bench/results/latest.json and PNG plots, then the control-plane
# benchmark (bench/results/control.json: 10k/100k/1M routes, 100k SIDs). BENCH_ARGS= for the
# full matrix (all sizes, single and many flows, 3 repetitions of 1 s trials).
BENCH_ARGS ?= --quick
bench: build
	@scripts/deps.sh bench
	./$(BENCH) run $(BENCH_ARGS) --out bench/results/latest.json
	/usr/bin/python3 bench/plot.py bench/results/latest.json
	./$(BENCH) control --json | tee bench/results/control.json

# Rebuild the scapy packet fixtures (tools/fixtures/packets.json).
fixtures:
	@scripts/deps.sh fixtures
	/usr/bin/python3 tools/fixtures/make_fixtures.py > tools/fixtures/packets.json.tmp
	mv tools/fixtures/packets.json.tmp tools/fixtures/packets.json

# gofmt, go vet, staticcheck (a tool of go.mod: `go tool staticcheck`, pinned there; staticcheck.conf
# says which checks and why) and clang-format on the BPF C (.clang-format).
BPF_C := $(wildcard bpf/*.c bpf/*.h bpf/sdk/seg6x/*.h plugins/*.c test/packet/testdata/plugins/*.c test/fuzz/testdata/plugins/*.c tools/bpf/*.c tools/bpf/*.h)
lint:
	@scripts/deps.sh lint
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	@bad=$$(for f in $(BPF_C); do clang-format $$f | cmp -s - $$f || echo $$f; done); \
	if [ -n "$$bad" ]; then echo "clang-format needed (clang-format -i FILE):"; echo "$$bad"; exit 1; fi

clean:
	rm -rf bin

# Regenerate the gRPC/protobuf Go code from api/seg6xv1/seg6x.proto (generated files are committed).
proto:
	@command -v protoc >/dev/null || (apt-get update -qq && apt-get install -y -qq protobuf-compiler)
	protoc -I api/seg6xv1 \
		--plugin=protoc-gen-go=$$($(GO) tool -n protoc-gen-go) \
		--plugin=protoc-gen-go-grpc=$$($(GO) tool -n protoc-gen-go-grpc) \
		--go_out=api/seg6xv1 --go_opt=paths=source_relative \
		--go-grpc_out=api/seg6xv1 --go-grpc_opt=paths=source_relative \
		seg6x.proto
