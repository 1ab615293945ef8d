#!/usr/bin/env bash
# Builds the real `ollama` binary that the integration tests in
# internal/ollamatest run against, and prints its path on the last line of
# stdout (progress goes to stderr):
#
#   OLLAMA_BIN=$(scripts/ollama-build.sh | tail -n1)
#   BULKHEAD_OLLAMA_BIN=$OLLAMA_BIN BULKHEAD_INTEGRATION=1 go test ./internal/ollamatest/
#
# Idempotent: when the binary already exists nothing is done. Otherwise it
#   1. apt-installs the C++ headers ollama's cgo build needs but its module zip
#      lacks (nlohmann-json3-dev, libstb-dev) and a C/C++ compiler, if missing;
#   2. takes miniaudio.h from the Go module github.com/gen2brain/malgo;
#   3. `go install github.com/ollama/ollama@$VERSION` (CPU backend compiled in)
#      with GOBIN=$HOME/.cache/bulkhead/ollama-$VERSION/bin.
# Needs Go and, on a fresh machine, root (or sudo) for apt-get. The build
# compiles llama.cpp/ggml: expect ~10-20 min on 2 cores; cache the directory.
set -euo pipefail

VERSION="${BULKHEAD_OLLAMA_VERSION:-v0.17.4}"
MALGO_VERSION="v0.11.24"
PREFIX="${BULKHEAD_OLLAMA_PREFIX:-${HOME}/.cache/bulkhead/ollama-${VERSION}}"
BIN_DIR="${PREFIX}/bin"
BIN="${BIN_DIR}/ollama"

log() { printf '[ollama-build] %s\n' "$*" >&2; }

if [[ -x "${BIN}" ]]; then
	log "already built: ${BIN}"
	echo "${BIN}"
	exit 0
fi

command -v go >/dev/null || { log "go not found on PATH"; exit 1; }
mkdir -p "${PREFIX}"

# Serialize concurrent invocations (parallel CI jobs sharing a cache).
if command -v flock >/dev/null; then
	exec 9>"${PREFIX}/.lock"
	flock 9
	if [[ -x "${BIN}" ]]; then
		log "built by a concurrent run: ${BIN}"
		echo "${BIN}"
		exit 0
	fi
fi

# --- 1. system packages --------------------------------------------------
need=()
[[ -f /usr/include/nlohmann/json.hpp ]] || need+=(nlohmann-json3-dev)
[[ -f /usr/include/stb/stb_image.h ]] || need+=(libstb-dev)
command -v gcc >/dev/null || need+=(gcc)
command -v g++ >/dev/null || need+=(g++)
if ((${#need[@]})); then
	SUDO=()
	if [[ $(id -u) -ne 0 ]]; then
		command -v sudo >/dev/null || { log "need root or sudo to install: ${need[*]}"; exit 1; }
		SUDO=(sudo)
	fi
	export DEBIAN_FRONTEND=noninteractive
	log "apt-get install ${need[*]}"
	# Only refresh the package lists when they are missing or the install
	# cannot find the packages.
	if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null ||
		! "${SUDO[@]}" apt-get install -y --no-install-recommends "${need[@]}" >&2; then
		log "apt-get update"
		"${SUDO[@]}" apt-get update >&2
		"${SUDO[@]}" apt-get install -y --no-install-recommends "${need[@]}" >&2
	fi
fi

# --- 2. miniaudio.h from github.com/gen2brain/malgo -----------------------
# Run the go commands outside any module / workspace of the caller.
WORK="$(mktemp -d)"
trap 'rm -rf "${WORK}"' EXIT
export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=1

INC="${PREFIX}/include"
if [[ ! -s "${INC}/miniaudio/miniaudio.h" ]]; then
	log "fetching miniaudio.h from github.com/gen2brain/malgo@${MALGO_VERSION}"
	(cd "${WORK}" && go mod init bulkhead-ollama-build >/dev/null 2>&1)
	json="$(cd "${WORK}" && go mod download -json "github.com/gen2brain/malgo@${MALGO_VERSION}")"
	dir="$(printf '%s\n' "${json}" | sed -n 's/^[[:space:]]*"Dir":[[:space:]]*"\(.*\)",\{0,1\}$/\1/p' | head -n1)"
	if [[ -z "${dir}" || ! -f "${dir}/miniaudio.h" ]]; then
		log "miniaudio.h not found in malgo module (go mod download said: ${json})"
		exit 1
	fi
	mkdir -p "${INC}/miniaudio"
	rm -f "${INC}/miniaudio/miniaudio.h.tmp"
	cp "${dir}/miniaudio.h" "${INC}/miniaudio/miniaudio.h.tmp"
	chmod 0644 "${INC}/miniaudio/miniaudio.h.tmp" # the module cache is read-only
	mv "${INC}/miniaudio/miniaudio.h.tmp" "${INC}/miniaudio/miniaudio.h"
fi

# --- 3. build ollama ----------------------------------------------------
log "building github.com/ollama/ollama@${VERSION} into ${BIN_DIR} (this takes a while)"
start=${SECONDS}
(
	cd "${WORK}"
	# `go install pkg@version` rejects -mod; it never uses the caller's go.mod.
	unset GOFLAGS
	GOBIN="${BIN_DIR}" CGO_CPPFLAGS="-I${INC} ${CGO_CPPFLAGS:-}" \
		go install -trimpath \
		-ldflags="-s -w -X=github.com/ollama/ollama/version.Version=${VERSION#v}" \
		"github.com/ollama/ollama@${VERSION}" >&2
)
if [[ ! -x "${BIN}" ]]; then
	log "go install succeeded but ${BIN} is missing"
	exit 1
fi
log "built in $((SECONDS - start))s: $("${BIN}" --version 2>&1 | tail -n1 | sed "s/^Warning: //")"
echo "${BIN}"
