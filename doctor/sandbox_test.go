package doctor

import (
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// doctor names each layer and whether it held; a degraded one says what
// got through and how to get it back.
func TestSandboxChecks(t *testing.T) {
	r := sandbox.Report{Namespaces: "operation not permitted", Layers: []sandbox.Layer{
		{Name: "files", By: "Landlock ABI 7", Holds: true, Detail: "never bulkhead's data directory"},
		{Name: "network", By: "Landlock ABI 7, seccomp", Holds: false, Detail: "a grant opens its port on every host"},
		{Name: "unix sockets", By: "nothing", Holds: false, Detail: "connects to no socket of yours", Reached: []string{"a pathname unix socket"}},
	}}
	cs := sandboxChecks(r)
	if len(cs) != 3 {
		t.Fatalf("%+v", cs)
	}
	if !cs[0].OK || cs[0].Name != "sandbox: files" || !strings.Contains(cs[0].Detail, "Landlock ABI 7") || cs[0].Fix != "" {
		t.Fatalf("a layer that holds: %+v", cs[0])
	}
	if cs[1].OK || !strings.Contains(cs[1].Detail, "degraded") || !strings.Contains(cs[1].Fix, "user namespaces") || !strings.Contains(cs[1].Fix, "operation not permitted") {
		t.Fatalf("a degraded layer: %+v", cs[1])
	}
	if cs[2].OK || !strings.Contains(cs[2].Detail, "reached a pathname unix socket") || !strings.Contains(cs[2].Fix, "seccomp") {
		t.Fatalf("a layer that let something through: %+v", cs[2])
	}
	// Where no overlay can be made the folders are read-only to apps:
	// never a ✓, and the fix says how to get staging back.
	staged := sandboxChecks(sandbox.Report{Namespaces: "operation not permitted", Layers: []sandbox.Layer{
		{Name: "staged writes", By: "read-only folders", Holds: false, Detail: "no layer can be made here (permission denied): the folders granted to write are read-only to it"}}})
	if staged[0].OK || !strings.Contains(staged[0].Detail, "read-only") || !strings.Contains(staged[0].Fix, "overlay") || !strings.Contains(staged[0].Fix, "operation not permitted") {
		t.Fatalf("no staged writes: %+v", staged[0])
	}
	if c := sandboxChecks(sandbox.Report{Err: "no executable"}); len(c) != 1 || c[0].OK || !strings.Contains(c[0].Detail, "no executable") {
		t.Fatalf("a probe that could not run: %+v", c)
	}
}
