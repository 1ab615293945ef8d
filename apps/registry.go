package apps

import (
	"errors"
	"fmt"
	"sort"
)

// Registry is the set of installed apps, checked against the catalog.
type Registry struct {
	catalog *Catalog
	apps    map[string]App
	order   []string
}

// NewRegistry installs apps; every manifest is checked against the catalog.
func NewRegistry(cat *Catalog, installed ...App) (*Registry, error) {
	var errs []error
	// An app's own functionalities (an MCP server's tools) join the
	// catalog of this registry.
	var own []Functionality
	for _, a := range installed {
		if o, ok := a.(Owner); ok {
			own = append(own, o.Own()...)
		}
	}
	if withOwn, err := cat.With(own...); err != nil {
		errs = append(errs, err)
	} else {
		cat = withOwn
	}
	r := &Registry{catalog: cat, apps: map[string]App{}}
	for _, a := range installed {
		m := a.Manifest()
		if err := m.Check(cat); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := r.apps[m.Name]; dup {
			errs = append(errs, fmt.Errorf("app %q installed twice", m.Name))
			continue
		}
		r.apps[m.Name] = a
		r.order = append(r.order, m.Name)
	}
	sort.Strings(r.order)
	return r, errors.Join(errs...)
}

// Owner is an app with functionalities of its own, named after it
// (<app>.<function>), which its registry adds to the catalog.
type Owner interface {
	Own() []Functionality
}

// Catalog is the catalog the registry was checked against.
func (r *Registry) Catalog() *Catalog { return r.catalog }

// App returns an installed app.
func (r *Registry) App(name string) (App, bool) {
	a, ok := r.apps[name]
	return a, ok
}

// Names lists installed apps, sorted.
func (r *Registry) Names() []string { return append([]string(nil), r.order...) }

// Providers lists the installed apps that provide a functionality, sorted.
func (r *Registry) Providers(fn string) []string {
	var out []string
	for _, name := range r.order {
		if _, ok := r.apps[name].Manifest().Provides[fn]; ok {
			out = append(out, name)
		}
	}
	return out
}

// Functionalities lists the catalog entries that some installed app
// provides, sorted by name.
func (r *Registry) Functionalities() []Functionality {
	var out []Functionality
	for _, f := range r.catalog.List() {
		if len(r.Providers(f.Name)) > 0 {
			out = append(out, f)
		}
	}
	return out
}
