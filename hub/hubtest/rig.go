// Package hubtest builds a real hub for tests: an Operator over a scripted
// Ollama server, a badger store in a temporary folder, the demo apps (or
// the given ones) and a permission broker. Everything is closed when the
// test ends.
package hubtest

import (
	"path/filepath"
	"sync"
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
	// HubModel names the hub's model ("": Model); with SpokeModelPrefix
	// set, each app's spoke asks the model prefix+app, so a test can tell
	// the owners' calls apart. Models are further names the server knows.
	HubModel         string
	SpokeModelPrefix string
	Models           []string
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
	close  sync.Once
}

// Close stops the operator and closes the store (also done when the test
// ends), so a test can scan the data folder.
func (r *Rig) Close() {
	r.close.Do(func() {
		r.Op.Close()
		r.Store.Close()
	})
}

// New builds a rig.
func New(t testing.TB, c Config) *Rig {
	t.Helper()
	hubModel := c.HubModel
	if hubModel == "" {
		hubModel = Model
	}
	list := c.Apps
	if list == nil {
		list = demo.Apps()
	}
	models := append([]string{Model, hubModel}, c.Models...)
	spokeModel := func(app string) string { return Model }
	if c.SpokeModelPrefix != "" {
		spokeModel = func(app string) string { return c.SpokeModelPrefix + app }
		models = append(models, spokeModel("vanilla"))
		for _, a := range list {
			models = append(models, spokeModel(a.Manifest().Name))
		}
	}
	srv := ollamatest.NewScripted(t, c.Script, models...)
	dir := t.TempDir()
	store, err := memory.Open(filepath.Join(dir, "db"), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cat := c.Catalog
	if cat == nil {
		cat = apps.Default()
	}
	reg, err := apps.NewRegistry(cat, list...)
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := store.Namespace("hub")
	keyFile := filepath.Join(dir, "key")
	broker, err := permissions.NewBroker(permissions.Options{Store: ns, NotFound: memory.ErrNotFound, KeyFile: keyFile, Rules: c.Rules, Prompter: c.Prompter})
	if err != nil {
		t.Fatal(err)
	}
	hc, _ := llm.New(llm.Config{Host: srv.Host(), Model: hubModel}, nil)
	opts := hub.Options{Store: store, HubModel: hc, Apps: reg, Broker: broker, History: 4, SpokeHistory: 4, CallTimeout: 30 * time.Second,
		SpokeModel: func(app string) (spokes.Model, error) {
			return llm.New(llm.Config{Host: srv.Host(), Model: spokeModel(app)}, nil)
		},
		// A private turn's broker reads the stored grants and keeps
		// nothing, as the engine's does.
		PrivateBroker: func() (*permissions.Broker, error) {
			return permissions.NewBroker(permissions.Options{Store: memory.NewScratch(ns), NotFound: memory.ErrNotFound, KeyFile: keyFile, Rules: c.Rules, Prompter: c.Prompter, Grants: broker})
		},
	}
	if c.Modify != nil {
		c.Modify(&opts)
	}
	op, err := hub.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &Rig{Srv: srv, Store: store, Op: op, Broker: broker, Apps: reg, Dir: dir}
	t.Cleanup(r.Close)
	return r
}
