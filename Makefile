# The whole test suite, as CI runs it (.ci/run calls `make test`).
.PHONY: test fmt vet race fuzz

FUZZTIME ?= 5s

test: fmt vet race fuzz

fmt:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	go vet ./...

race:
	go test -race -count=1 ./...

# Each fuzz target for a few seconds; FUZZTIME=10m for a real run.
fuzz:
	go test -run '^$$' -fuzz '^FuzzParseLine$$' -fuzztime $(FUZZTIME) ./gitstore/
	go test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./provenance/
	go test -run '^$$' -fuzz '^FuzzParseAnswer$$' -fuzztime $(FUZZTIME) ./learn/
	go test -run '^$$' -fuzz '^FuzzFind$$' -fuzztime $(FUZZTIME) ./gitstore/anchor/
