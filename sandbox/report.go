package sandbox

import (
	"fmt"
	"strings"
)

// Report is what Probe found: each layer of the sandbox, by what it
// keeps from a command, whether it held when a command tried.
type Report struct {
	Layers []Layer `json:"layers"`
	// Namespaces is why commands run without namespaces here ("" when
	// they run in them).
	Namespaces string `json:"namespaces,omitempty"`
	// Err is why the probe itself could not run ("" when it ran).
	Err string `json:"err,omitempty"`
}

// Layer is one thing the sandbox keeps from a command.
type Layer struct {
	// Name is what it keeps: "files", "/etc", "unix sockets", …
	Name string `json:"name"`
	// By names the mechanisms that keep it here ("network namespace,
	// Landlock ABI 7, seccomp").
	By string `json:"by"`
	// Holds is true when the probe's attempt failed as it must.
	Holds bool `json:"holds"`
	// Detail says what the layer keeps, or what a degraded one leaves
	// open.
	Detail string `json:"detail"`
	// Reached are what the probe's attempts got to that they must not
	// have.
	Reached []string `json:"reached,omitempty"`
}

// OK reports whether every layer held.
func (r Report) OK() bool {
	if r.Err != "" || len(r.Layers) == 0 {
		return false
	}
	for _, l := range r.Layers {
		if !l.Holds {
			return false
		}
	}
	return true
}

// Degraded lists the layers that did not hold.
func (r Report) Degraded() []Layer {
	var out []Layer
	for _, l := range r.Layers {
		if !l.Holds {
			out = append(out, l)
		}
	}
	return out
}

// Summary is the report in one line, for the apps screen's title.
func (r Report) Summary() string {
	switch {
	case r.Err != "":
		return "sandbox: not checked (" + r.Err + ")"
	case r.OK():
		return fmt.Sprintf("sandbox: all %d layers hold", len(r.Layers))
	}
	var names []string
	for _, l := range r.Degraded() {
		names = append(names, l.Name)
	}
	return fmt.Sprintf("sandbox: degraded — %s open (see bulkhead doctor)", strings.Join(names, ", "))
}
