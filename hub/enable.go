package hub

import (
	"fmt"
	"slices"
)

// Enabled reports whether an installed app may be planned for. Every app
// starts enabled.
func (o *Operator) Enabled(app string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.disabled[app]
}

// SetEnabled enables or disables an installed app for this process. A
// disabled app's functionalities leave the planner's catalog, it is never
// selected for a step or an ISC request, and naming it in a request does
// not route to it. Spokes already running finish their work.
func (o *Operator) SetEnabled(app string, on bool) error {
	if o.opts.Apps == nil {
		return fmt.Errorf("no app %q is installed", app)
	}
	if _, ok := o.opts.Apps.App(app); !ok {
		return fmt.Errorf("no app %q is installed", app)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if on {
		delete(o.disabled, app)
	} else {
		o.disabled[app] = true
	}
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
