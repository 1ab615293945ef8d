package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportArrows keeps the package arrows pointing down (STYLE.md):
// tui → hub → spokes → apps, everything may use memory and permissions,
// and only tui touches the terminal libraries.
func TestImportArrows(t *testing.T) {
	const mod = "github.com/bulkhead-dev/bulkhead/"
	forbidden := map[string][]string{
		"llm":      {mod, "charm.land/"},
		"memory":   {mod, "charm.land/"},
		"config":   {mod + "hub", mod + "spokes", mod + "memory", mod + "tui", "charm.land/"},
		"spokes":   {mod + "hub", mod + "tui", mod + "engine", "charm.land/"},
		"hub":      {mod + "tui", mod + "engine", mod + "headless", "charm.land/"},
		"engine":   {mod + "tui", mod + "headless", "charm.land/"},
		"headless": {mod + "tui", "charm.land/"},
		"doctor":   {mod + "tui", mod + "hub", "charm.land/"},
	}
	for pkg, bad := range forbidden {
		out, err := exec.Command("go", "list", "-deps", "./"+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == mod+pkg {
				continue
			}
			for _, b := range bad {
				if strings.HasPrefix(dep, b) {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
		}
	}
}
