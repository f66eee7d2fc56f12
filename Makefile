# The whole test suite, as CI runs it (.ci/run calls `make test`).
.PHONY: test fmt vet race fuzz chromium mcp-clients

FUZZTIME ?= 5000x
MCP_CLIENTS := cmd/memd/testdata/mcpclients

test: chromium mcp-clients fmt vet race fuzz

# The web UI test drives Debian's Chromium; install it when it is missing.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing Debian's chromium for the web UI test"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# The MCP tests drive the official TypeScript SDK client and the inspector
# CLI from npm, at the versions package-lock.json pins; npm ci runs again
# only when the lock file changes.
mcp-clients: $(MCP_CLIENTS)/node_modules/.package-lock.json

$(MCP_CLIENTS)/node_modules/.package-lock.json: $(MCP_CLIENTS)/package-lock.json
	npm ci --prefix $(MCP_CLIENTS) --no-audit --no-fund --loglevel=error
	@touch $@

fmt:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# -race: vet compiles every package as the race run does (memd's tests run
# the daemon built with -race too), so a cold build compiles each once.
vet:
	go vet -race ./...

race:
	MEMD_REQUIRE_MCP_CLIENTS=1 go test -race -count=1 ./...

# Each fuzz target for a count of inputs (a few seconds each here), FUZZTIME=10m for a real
# run. A count, not a duration: Go 1.26's fuzzer can fail a target with "context deadline
# exceeded" when a duration ends under load (go.dev/issue/75804, fixed in Go 1.27).
fuzz:
	go test -run '^$$' -fuzz '^FuzzParseLine$$' -fuzztime $(FUZZTIME) ./gitstore/
	go test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./provenance/
	go test -run '^$$' -fuzz '^FuzzParseAnswer$$' -fuzztime $(FUZZTIME) ./learn/
	go test -run '^$$' -fuzz '^FuzzParseProposals$$' -fuzztime $(FUZZTIME) ./learn/
	go test -run '^$$' -fuzz '^FuzzFind$$' -fuzztime $(FUZZTIME) ./gitstore/anchor/
	go test -run '^$$' -fuzz '^FuzzParseStamp$$' -fuzztime $(FUZZTIME) .
	go test -run '^$$' -fuzz '^FuzzSnapshot$$' -fuzztime $(FUZZTIME) ./daemon/index/
	go test -run '^$$' -fuzz '^FuzzDecodeSnapshot$$' -fuzztime $(FUZZTIME) ./daemon/index/
	go test -run '^$$' -fuzz '^FuzzFoldASCII$$' -fuzztime $(FUZZTIME) ./daemon/search/
	go test -run '^$$' -fuzz '^FuzzContainsFold$$' -fuzztime $(FUZZTIME) ./daemon/search/
	go test -run '^$$' -fuzz '^FuzzReadPostings$$' -fuzztime $(FUZZTIME) ./daemon/search/
	go test -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(FUZZTIME) ./web/markdown/
