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

echo "== MCP servers from npm (for the integration tests)"
mcp_packages=(@modelcontextprotocol/server-filesystem@2026.8.31 @modelcontextprotocol/server-everything@2026.8.31)
BULKHEAD_MCP_NPM="${BULKHEAD_MCP_NPM:-$HOME/.cache/bulkhead/npm}"
missing=()
for p in "${mcp_packages[@]}"; do
	have="$(node -p "require('$BULKHEAD_MCP_NPM/node_modules/${p%@*}/package.json').version" 2>/dev/null || true)"
	[[ "$have" == "${p##*@}" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
	command -v npm >/dev/null || { echo "test: npm is required for the MCP integration tests (https://nodejs.org)" >&2; exit 1; }
	npm install --prefix "$BULKHEAD_MCP_NPM" --save-exact --no-audit --no-fund --loglevel=error "${missing[@]}"
fi
export BULKHEAD_MCP_NPM
echo "using $BULKHEAD_MCP_NPM"

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
