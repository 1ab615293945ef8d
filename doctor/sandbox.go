package doctor

import "github.com/bulkhead-dev/bulkhead/sandbox"

// sandboxCheck says whether the operating-system bulkhead of
// out-of-process apps (package sandbox) holds on this system.
func sandboxCheck(status func() (int, error)) Check {
	line, ok := sandbox.Summary(status())
	c := Check{Name: "sandbox", OK: ok, Detail: line}
	if !ok {
		c.Fix = "run bulkhead on Linux 5.13 or later with Landlock enabled (landlock in the kernel's lsm= list); until then, grant MCP servers and the shell app only what you would let any program of yours touch"
	}
	return c
}
