# seg6x: `make demo` runs the lab demo, `make test` runs every test. Both install what they need.
export PATH := /usr/local/go/bin:$(PATH)
GO ?= go
BIN := bin/seg6x
# The project's tools, apart from the product binary: the namespace labs and the benchmarks.
LAB := bin/seg6x-lab
BENCH := bin/seg6x-bench
BPF_SRC := $(wildcard bpf/*.c bpf/*.h)

.PHONY: all deps generate build install deb test demo demo-usid demo-fabric demo-bgp bench bench-micro fixtures fuzz lint clean proto

all: build

deps:
	@scripts/deps.sh

# bpf2go: compiles the BPF C with clang and writes Go bindings (types generated from the C structs):
# the product programs (bpf/ into internal/dataplane), and from tools/bpf/ the benchmark rig's
# (tools/benchrig/rigbpf), the lab's access ports (tools/lab/accessbpf) and its GSO observer
# (tools/lab/gsoprobe).
generate: deps
	$(GO) generate ./internal/dataplane/ ./tools/benchrig/rigbpf/ ./tools/lab/accessbpf/ ./tools/lab/gsoprobe/

# What `seg6x version` says (internal/buildinfo): the commit (-dirty: the work tree had changes), the
# build time, and the release: a tagged commit's tag, else the one in buildinfo.go.
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
VERSION ?= $(shell git describe --tags --exact-match 2>/dev/null)
LDFLAGS = -X github.com/seg6x/seg6x/internal/buildinfo.Commit=$(COMMIT) -X github.com/seg6x/seg6x/internal/buildinfo.BuildDate=$(BUILD_DATE) \
	$(if $(VERSION),-X github.com/seg6x/seg6x/internal/buildinfo.Version=$(VERSION))

# The product (bin/seg6x) and the tools (bin/seg6x-lab, bin/seg6x-bench), which run the seg6x beside them.
build: generate
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/seg6x
	$(GO) build -ldflags "$(LDFLAGS)" -o $(LAB) ./cmd/seg6x-lab
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BENCH) ./cmd/seg6x-bench

# Install the binary, the systemd unit, a default /etc/seg6x/seg6x.yaml (an existing one is kept),
# man pages, bash/zsh/fish completions and the docs under $(DESTDIR)$(PREFIX); `make deb` puts the
# same, under /usr, into bin/seg6x_<version>_<arch>.deb. scripts/package.sh; docs/install.md.
PREFIX ?= /usr/local
install: build
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" BIN="$(BIN)" scripts/package.sh install

deb: build
	BIN="$(BIN)" scripts/package.sh deb

# Unit, packet (BPF_PROG_TEST_RUN), verifier and namespace-lab integration tests. Needs root.
test: build
	$(GO) vet ./...
	# -p 1: one package at a time. The namespace rigs pin threads at real-time priority and count
	# every frame; sharing the two CPUs with another package's rig would make them measure each other.
	$(GO) test -count=1 -p 1 -timeout 15m ./...

# One million generated and mutated frames through the real program, each checked by the output
# oracle (test/fuzz, tools/pktcheck); prints the rate and the counts per action and reason.
# `make test` runs a slice of 50000. FUZZ_SEED picks another fixed sequence.
FUZZ_FRAMES ?= 1000000
FUZZ_SEED ?= 1
fuzz: build
	SEG6X_FUZZ_FRAMES=$(FUZZ_FRAMES) SEG6X_FUZZ_SEED=$(FUZZ_SEED) $(GO) test -count=1 -v -timeout 60m -run TestFuzzFrames ./test/fuzz/

demo: build
	./$(LAB) demo

# The same lab over uSID containers: uN at the transit node, uDT4/uDT6 at the PEs.
demo-usid: build
	./$(LAB) demo --usid

# The same lab on a jumbo fabric: two parallel 9000-byte uplinks per hop (ECMP), tenant A at 9000.
demo-fabric: build
	./$(LAB) demo --fabric

# The BGP lab: three PEs learn each other's tenant prefixes from a route reflector (FRR's bgpd; --rr
# gobgpd for the packaged gobgpd), traffic for both tenants, one PE stopped and started again.
demo-bgp: build
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

lint:
	gofmt -l . | (! grep .) || (echo "gofmt needed"; exit 1)
	$(GO) vet ./...

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
