package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportArrows keeps the package arrows pointing down (STYLE.md):
// tui → hub → spokes → apps, everything may use memory and permissions,
// those two import nothing of ours, and only tui touches the terminal
// libraries.
func TestImportArrows(t *testing.T) {
	const mod = "github.com/bulkhead-dev/bulkhead/"
	ui := []string{mod + "tui", "charm.land/", "github.com/charmbracelet/"}
	forbidden := map[string][]string{
		"llm":         append([]string{mod}, ui...),
		"memory":      append([]string{mod}, ui...),
		"permissions": append([]string{mod}, ui...),
		"sandbox":     append([]string{mod}, ui...),
		// What an app wrote, read and applied: the sandbox's layers and
		// the permissions' words, nothing of the hub or the apps.
		"changes":  append([]string{mod + "hub", mod + "spokes", mod + "apps", mod + "engine", mod + "memory", mod + "llm", mod + "serve"}, ui...),
		"apps":     append([]string{mod + "hub", mod + "spokes", mod + "memory", mod + "engine", mod + "llm"}, ui...),
		"config":   append([]string{mod + "hub", mod + "spokes", mod + "memory", mod + "apps", mod + "permissions"}, ui...),
		"spokes":   append([]string{mod + "hub", mod + "engine", mod + "headless"}, ui...),
		"hub":      append([]string{mod + "engine", mod + "headless", mod + "doctor"}, ui...),
		"engine":   append([]string{mod + "headless"}, ui...),
		"headless": ui,
		"bench":    append([]string{mod + "doctor", mod + "serve"}, ui...),
		"doctor":   append([]string{mod + "hub", mod + "spokes"}, ui...),
		// The serving process and its clients speak of the engine's
		// parts; no terminal, no command line.
		"serve": append([]string{mod + "headless", mod + "doctor"}, ui...),
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], mod)
		top, _, _ := strings.Cut(pkg, "/")
		bad, ok := forbidden[top]
		if !ok {
			continue
		}
		seen++
		for _, dep := range fields[1:] {
			if strings.HasPrefix(dep, mod+top) { // itself and its own subpackages
				continue
			}
			for _, b := range bad {
				if strings.HasPrefix(dep, b) {
					t.Errorf("%s imports %s", fields[0], dep)
				}
			}
		}
	}
	if seen < len(forbidden) {
		t.Fatalf("checked %d packages, want at least %d: go list output changed?", seen, len(forbidden))
	}
}

// TestTUIArrows keeps the shape of tui/ (tui/doc.go): the root model
// wires the parts — the chat, each dialog, each screen, the setup panel
// — and no part imports another or the root; a part builds on the kit
// alone (style, widget, forms, request, and screens' shared Outcome),
// and the kit on nothing of tui but the theme.
func TestTUIArrows(t *testing.T) {
	const mod = "github.com/bulkhead-dev/bulkhead/"
	kit := map[string]bool{"tui/style": true, "tui/widget": true, "tui/forms": true, "tui/request": true, "tui/screens": true}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./tui/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	parts := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], mod)
		if pkg == "tui" {
			continue // the root wires everything
		}
		if !kit[pkg] {
			parts++
		}
		for _, dep := range fields[1:] {
			d, ours := strings.CutPrefix(dep, mod)
			if !ours || !strings.HasPrefix(d, "tui") {
				continue
			}
			switch {
			case kit[pkg] && d != "tui/style":
				t.Errorf("%s is of the kit and imports %s: the kit builds on the theme alone", pkg, d)
			case !kit[pkg] && !kit[d]:
				t.Errorf("%s imports %s: a part of the UI imports only the kit; the root wires the parts", pkg, d)
			}
		}
	}
	if parts < 8 {
		t.Fatalf("found %d parts under tui/, want the chat, the dialogs, the screens and the setup panel", parts)
	}
}
