package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/calc"
	"github.com/bulkhead-dev/bulkhead/apps/clock"
	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/apps/files"
	"github.com/bulkhead-dev/bulkhead/apps/notes"
	"github.com/bulkhead-dev/bulkhead/apps/shell"
)

// Packs are names that enable several apps at once.
var Packs = map[string][]string{
	"builtin": {"files", "notes", "shell", "clock", "calc"},
	"demo":    {"metro_hail", "quick_ride", "mail", "drive", "health_companion", "travel_mate", "creative_muse", "symptom_solver"},
}

// Install builds the registry of the enabled apps (names or packs).
func Install(enable []string, workspace string) (*apps.Registry, error) {
	var names []string
	for _, e := range enable {
		if e == "none" {
			continue
		}
		if pack, ok := Packs[e]; ok {
			names = append(names, pack...)
		} else {
			names = append(names, e)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	demos := map[string]apps.App{}
	for _, a := range demo.Apps() {
		demos[a.Manifest().Name] = a
	}
	var list []apps.App
	var errs []error
	for _, n := range names {
		switch n {
		case "files":
			list = append(list, files.New(workspace, files.Options{}))
		case "notes":
			list = append(list, notes.New())
		case "shell":
			list = append(list, shell.New(workspace, shell.Options{}))
		case "clock":
			list = append(list, clock.New(nil))
		case "calc":
			list = append(list, calc.New())
		default:
			if a, ok := demos[n]; ok {
				list = append(list, a)
			} else {
				errs = append(errs, fmt.Errorf("enable: no app or pack named %q (packs: builtin, demo)", n))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return apps.NewRegistry(apps.Default(), list...)
}
