#!/usr/bin/env bash
# The test command: builds (once, cached under ~/.cache/bulkhead) the real
# Ollama server the integration tests run against, then checks formatting,
# vets, and runs every test with the race detector, integration included.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v go >/dev/null || { echo "test: Go is required (https://go.dev/dl/)" >&2; exit 1; }

echo "== ollama (for the integration tests)"
BULKHEAD_OLLAMA_BIN="$(bash scripts/ollama-build.sh | tail -n1)"
export BULKHEAD_OLLAMA_BIN BULKHEAD_INTEGRATION=1
echo "using $BULKHEAD_OLLAMA_BIN"

echo "== gofmt"
unformatted="$(gofmt -l $(find . -name '*.go' -not -path './.git/*'))"
if [[ -n "$unformatted" ]]; then
	echo "gofmt would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test -race"
go test -race -count=1 -timeout 20m ./...
