package mcp

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// The npm registry a server started through npx (or pnpm, yarn, bunx)
// downloads from is the one the user's npm is configured for (`npm
// config get registry`: ~/.npmrc, a project's .npmrc, npm_config_registry),
// not necessarily registry.npmjs.org: `bulkhead mcp add` asks for that
// host as the server's network, and the sandboxed runner — whose HOME is a
// temporary folder, with no ~/.npmrc — is told it (npm_config_registry).

var registryOnce = sync.OnceValues(func() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "npm", "config", "get", "registry").Output()
	if err != nil {
		return "", fmt.Errorf("npm config get registry: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
})

// NPMRegistry is the registry the user's npm downloads from (its URL).
func NPMRegistry() (string, error) { return registryOnce() }

// RegistryEndpoint is the host:port of a registry URL.
func RegistryEndpoint(registry string) (string, error) {
	u, err := url.Parse(registry)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not a registry URL", registry)
	}
	if u.Port() != "" {
		return u.Host, nil
	}
	port := "443"
	if u.Scheme == "http" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// usesNPMRegistry says whether a runner downloads from the npm registry.
func usesNPMRegistry(r runner) bool {
	switch r.Exes[0] {
	case "npx", "pnpm", "yarn", "bunx":
		return true
	}
	return false
}
