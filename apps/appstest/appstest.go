// Package appstest holds checks that every app's tests share.
package appstest

import (
	"encoding/json"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// CheckResult validates a successful result of a's function fn against the
// function's own result schema and against the built-in catalog's response
// schema of every functionality fn provides: what crosses a bulkhead must
// match the catalog.
func CheckResult(t testing.TB, a apps.App, fn string, out json.RawMessage) {
	t.Helper()
	m := a.Manifest()
	f, ok := m.Function(fn)
	if !ok {
		t.Fatalf("%s has no function %q", m.Name, fn)
	}
	if err := apps.Validate(f.Result, out); err != nil {
		t.Errorf("%s result %s: %v", fn, out, err)
	}
	cat := apps.Default()
	for name, own := range m.Provides {
		if own != fn {
			continue
		}
		entry, _ := cat.Get(name)
		if err := apps.Validate(entry.Response, out); err != nil {
			t.Errorf("%s result against catalog %s: %v", fn, name, err)
		}
	}
}
