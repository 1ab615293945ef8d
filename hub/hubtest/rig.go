// Package hubtest builds a real hub for tests: an Operator over a scripted
// Ollama server, a badger store in a temporary folder, the demo apps (or
// the given ones) and a permission broker. Everything is closed when the
// test ends.
package hubtest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// Model is the model name the scripted server knows; every owner uses it.
const Model = "m"

// Config says what to build.
type Config struct {
	Script   ollamatest.Script
	Prompter permissions.Prompter // nil: requests that need asking are denied
	Rules    []permissions.Rule
	// Apps are installed (nil: the demo pack) over Catalog (nil: the
	// built-in catalog).
	Apps    []apps.App
	Catalog *apps.Catalog
	// Modify changes the hub's options before the Operator is built.
	Modify func(*hub.Options)
}

// Rig is a running hub.
type Rig struct {
	Srv    *ollamatest.Scripted
	Store  *memory.Store
	Op     *hub.Operator
	Broker *permissions.Broker
	Apps   *apps.Registry
	Dir    string
}

// New builds a rig.
func New(t testing.TB, c Config) *Rig {
	t.Helper()
	srv := ollamatest.NewScripted(t, c.Script, Model)
	dir := t.TempDir()
	store, err := memory.Open(filepath.Join(dir, "db"), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cat := c.Catalog
	if cat == nil {
		cat = apps.Default()
	}
	list := c.Apps
	if list == nil {
		list = demo.Apps()
	}
	reg, err := apps.NewRegistry(cat, list...)
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := store.Namespace("hub")
	broker, err := permissions.NewBroker(permissions.Options{Store: ns, NotFound: memory.ErrNotFound, KeyFile: filepath.Join(dir, "key"), Rules: c.Rules, Prompter: c.Prompter})
	if err != nil {
		t.Fatal(err)
	}
	hc, _ := llm.New(llm.Config{Host: srv.Host(), Model: Model}, nil)
	opts := hub.Options{Store: store, HubModel: hc, Apps: reg, Broker: broker, History: 4, SpokeHistory: 4, CallTimeout: 5 * time.Second,
		SpokeModel: func(string) (spokes.Model, error) { return llm.New(llm.Config{Host: srv.Host(), Model: Model}, nil) }}
	if c.Modify != nil {
		c.Modify(&opts)
	}
	op, err := hub.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		op.Close()
		store.Close()
	})
	return &Rig{Srv: srv, Store: store, Op: op, Broker: broker, Apps: reg, Dir: dir}
}
