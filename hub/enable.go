package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/bulkhead-dev/bulkhead/memory"
)

// disabledKey is where the apps switched off are kept, in the hub's
// namespace: a JSON list of names.
const disabledKey = "apps.disabled"

// loadDisabled reads the apps switched off in an earlier run. A name that
// is no longer installed stays in the list, so the switch holds if the app
// comes back.
func (o *Operator) loadDisabled() error {
	ns, err := o.store.Namespace(hubOwner)
	if err != nil {
		return err
	}
	raw, err := ns.Get(disabledKey)
	if errors.Is(err, memory.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the apps switched off: %w", err)
	}
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		o.log.Warn("the list of apps switched off is unreadable; every app starts on", "err", err)
		return nil
	}
	for _, n := range names {
		o.disabled[n] = true
	}
	return nil
}

// Enabled reports whether an installed app may be planned for. Every app
// starts enabled.
func (o *Operator) Enabled(app string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.disabled[app]
}

// SetEnabled enables or disables an installed app, and keeps the switch
// in the data directory (the hub's namespace), so that it holds for every
// later bulkhead on it — the TUI and `ask` alike — until switched back. A
// disabled app's functionalities leave the planner's catalog, it is never
// selected for a step or an ISC request, and naming it in a request does
// not route to it. Spokes already running finish their work. A switch
// that cannot be kept is not made.
func (o *Operator) SetEnabled(app string, on bool) error {
	if o.opts.Apps == nil {
		return fmt.Errorf("no app %q is installed", app)
	}
	if _, ok := o.opts.Apps.App(app); !ok {
		return fmt.Errorf("no app %q is installed", app)
	}
	ns, err := o.store.Namespace(hubOwner)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	next := map[string]bool{}
	for a := range o.disabled {
		next[a] = true
	}
	if on {
		delete(next, app)
	} else {
		next[app] = true
	}
	names := make([]string, 0, len(next))
	for a := range next {
		names = append(names, a)
	}
	slices.Sort(names)
	raw, err := json.Marshal(names)
	if err == nil {
		err = ns.Set(disabledKey, raw)
	}
	if err != nil {
		return fmt.Errorf("keep the switch of %s: %w", app, err)
	}
	o.disabled = next
	return nil
}

// providers lists the enabled apps that provide a functionality.
func (o *Operator) providers(fn string) []string {
	if o.opts.Apps == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.DeleteFunc(o.opts.Apps.Providers(fn), func(a string) bool { return o.disabled[a] })
}

// catalogNow is the planner's catalog: chat, and every functionality some
// enabled app provides.
func (o *Operator) catalogNow() []Functionality {
	out := make([]Functionality, 0, len(o.catalog))
	for _, f := range o.catalog {
		if f.Name == ChatFunctionality || len(o.providers(f.Name)) > 0 {
			out = append(out, f)
		}
	}
	return out
}
