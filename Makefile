# The whole test suite, as CI runs it (.ci/run calls `make test`).
.PHONY: test fmt vet lint race quality fuzz tools mcp-clients

FUZZTIME ?= 2000x
MCP_CLIENTS := cmd/memd/testdata/mcpclients

# The fuzz targets, the linters and the recall quality test run beside the
# race run, one worker each: near its end only the CLI's tests are left and
# a core would idle. Their output follows the race run's, which streams as
# it comes.
test: tools mcp-clients fmt vet
	@mkdir -p test-output; \
	{ $(MAKE) --no-print-directory lint && $(MAKE) --no-print-directory quality && $(MAKE) --no-print-directory fuzz FUZZFLAGS=-parallel=1; } > test-output/beside.log 2>&1 & beside=$$!; \
	$(MAKE) --no-print-directory race; race=$$?; \
	wait $$beside; besideok=$$?; \
	echo "--- make lint, make quality and make fuzz, run beside the race run:"; cat test-output/beside.log; \
	[ $$race = 0 ] && [ $$besideok = 0 ]

# The web UI test drives Debian's Chromium and the docs' examples run curl;
# install them when they are missing. The MCP clients need Node.js 20 or later.
tools:
	@missing=""; for t in chromium curl; do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian's$$missing for the tests"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; fi
	@node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' 2>/dev/null && command -v npm >/dev/null || { \
		echo "make test needs Node.js 20 or later with npm, for the MCP clients the tests drive"; exit 1; }

# The MCP tests drive the official TypeScript SDK client and the inspector
# CLI from npm, at the versions package-lock.json pins; npm ci runs again
# only when package.json or the lock file changes.
mcp-clients: $(MCP_CLIENTS)/node_modules/.package-lock.json

$(MCP_CLIENTS)/node_modules/.package-lock.json: $(MCP_CLIENTS)/package.json $(MCP_CLIENTS)/package-lock.json
	npm ci --prefix $(MCP_CLIENTS) --no-audit --no-fund --loglevel=error
	@touch $@

fmt:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# staticcheck and deadcode, at the versions go.mod's tool block pins (go
# tool builds them the first time). deadcode -test: the packages tests
# share (internal/memdtest, internal/scriptedmodel) are reached from tests.
lint:
	go tool staticcheck ./...
	@echo "go tool deadcode -test ./..."; out=$$(go tool deadcode -test ./...) || exit 1; \
	if [ -n "$$out" ]; then echo "unreachable functions:"; echo "$$out"; exit 1; fi

# -race: vet compiles every package as the race run does (memd's tests run
# the daemon built with -race too), so a cold build compiles each once.
vet:
	go vet -race ./...

# -vet=off: the vet target ran every check already; -ldflags='-s -w': test
# binaries without DWARF and symbol tables link faster (stack traces keep
# their names). The packages that hold only benchmarks (BENCH_ONLY) have no
# test to run: vet compiled them, and linking them would cost the run for
# nothing (TestMakefile_FuzzesEveryTarget checks they gain no test).
# go test runs two packages at a time in the order given: the slowest go
# first (SLOW_FIRST, slowest first), so the two finish together instead of
# one waiting on a long package started last.
BENCH_ONLY := internal/readbench internal/writebench
SLOW_FIRST := cmd/memd daemon cmd/memd/crashtest gitstore web daemon/search
race: tools mcp-clients
	@pkgs=$$(go list ./...) || exit 1; \
	pkgs=$$(echo "$$pkgs" | grep -v $(foreach p,$(BENCH_ONLY) $(SLOW_FIRST),-e '/$(p)$$')); \
	pkgs="$(foreach p,$(SLOW_FIRST),github.com/memd/memd/$(p)) $$pkgs"; \
	echo "MEMD_REQUIRE_MCP_CLIENTS=1 go test -race -vet=off -ldflags='-s -w' -count=1 <$$(echo $$pkgs | wc -w) packages, slowest first: ./... but $(BENCH_ONLY)>"; \
	MEMD_REQUIRE_MCP_CLIENTS=1 go test -race -vet=off -ldflags='-s -w' -count=1 $$pkgs

# Recall's quality over the judged sets (daemon/search/testdata/recall),
# without the race detector, under which it skips: it is one goroutine's
# arithmetic, six times as slow raced.
quality:
	go test -count=1 -run '^TestRecallQuality$$' ./daemon/search/

# Each fuzz target for a count of inputs (a few seconds each here), FUZZTIME=10m for a real
# run. A count, not a duration: Go 1.26's fuzzer can fail a target with "context deadline
# exceeded" when a duration ends under load (go.dev/issue/75804, fixed in Go 1.27).
fuzz:
	go test -run '^$$' -fuzz '^FuzzParseLine$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./gitstore/
	go test -run '^$$' -fuzz '^FuzzInBlock$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./gitstore/
	go test -run '^$$' -fuzz '^FuzzFactLineKeys$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./gitstore/
	go test -run '^$$' -fuzz '^FuzzDecodePlaces$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./gitstore/
	go test -run '^$$' -fuzz '^FuzzJournal_Read$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./gitstore/
	go test -run '^$$' -fuzz '^FuzzSplitThree$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./gitstore/
	go test -run '^$$' -fuzz '^FuzzMergeFactFiles$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./gitstore/
	go test -run '^$$' -fuzz '^FuzzEditsFrom$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./gitstore/
	go test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./provenance/
	go test -run '^$$' -fuzz '^FuzzParseAnswer$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./learn/
	go test -run '^$$' -fuzz '^FuzzParseProposals$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./learn/
	go test -run '^$$' -fuzz '^FuzzFind$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./gitstore/anchor/
	go test -run '^$$' -fuzz '^FuzzParseStamp$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) .
	go test -run '^$$' -fuzz '^FuzzExactKeys$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./daemon/httpapi/
	go test -run '^$$' -fuzz '^FuzzFactID_ASCIIAsTheGeneralForm$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) .
	go test -run '^$$' -fuzz '^FuzzParseDate$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) .
	go test -run '^$$' -fuzz '^FuzzCheckJSONText$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) .
	go test -run '^$$' -fuzz '^FuzzSnapshot$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./daemon/index/
	go test -run '^$$' -fuzz '^FuzzDecodeSnapshot$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./daemon/index/
	go test -run '^$$' -fuzz '^FuzzFoldASCII$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./daemon/search/
	go test -run '^$$' -fuzz '^FuzzContainsFold$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./daemon/search/
	go test -run '^$$' -fuzz '^FuzzWords_SameFromFolded$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./daemon/search/
	go test -run '^$$' -fuzz '^FuzzReadPostings$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./daemon/search/
	go test -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./web/markdown/
	go test -run '^$$' -fuzz '^FuzzOpen$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./daemon/vectors/
