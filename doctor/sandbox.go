package doctor

import (
	"fmt"
	"strings"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// sandboxChecks say, layer by layer, whether the operating-system
// bulkhead of out-of-process apps (package sandbox) held when a probe
// tried from inside what each layer must stop.
func sandboxChecks(r sandbox.Report) []Check {
	if r.Err != "" {
		return []Check{{Name: "sandbox", Detail: "could not be checked: " + r.Err,
			Fix: "run `bulkhead doctor` again; until it passes, grant MCP servers and the shell app only what you would let any program of yours touch"}}
	}
	var out []Check
	for _, l := range r.Layers {
		c := Check{Name: "sandbox: " + l.Name, OK: l.Holds, Detail: l.By + " — " + l.Detail}
		if !l.Holds {
			c.Detail = "degraded (" + l.By + "): " + l.Detail
			if len(l.Reached) > 0 {
				c.Detail += "; a command reached " + strings.Join(l.Reached, ", ")
			}
			c.Fix = layerFix(l.Name, r)
		}
		out = append(out, c)
	}
	return out
}

// layerFix is what gives a degraded layer back.
func layerFix(name string, r sandbox.Report) string {
	until := "; until then, grant MCP servers and the shell app only what you would let any program of yours touch"
	switch name {
	case "files", "/etc":
		return "run bulkhead on Linux 5.13 or later with Landlock enabled (landlock in the kernel's lsm= list)" + until
	case "abstract sockets", "network", "processes":
		why := ""
		if r.Namespaces != "" {
			why = fmt.Sprintf(" (here: %s)", r.Namespaces)
		}
		return "let your user make user namespaces" + why + ": sysctl kernel.unprivileged_userns_clone=1 (Debian), kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu), or run bulkhead outside a container that forbids them" + until
	case "unix sockets", "keyring":
		return "the seccomp filter is built for Linux on amd64 and arm64" + until
	case "staged writes":
		why := ""
		if r.Namespaces != "" {
			why = fmt.Sprintf(" (here: %s)", r.Namespaces)
		}
		return "apps write your folders through a kernel overlay in a user namespace of their own: run Linux 5.11 or later with overlayfs, and let your user make user namespaces" + why +
			" (sysctl kernel.unprivileged_userns_clone=1 on Debian, kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu); until then the folders granted to write (the workspace, mcp.<name>.folders) are read-only to apps"
	}
	return "see docs/sandbox.md" + until
}
