// Package apps holds what bulkhead knows of apps: the hub-owned
// functionality catalog, app manifests, the App interface every built-in
// or out-of-process app implements, the registry of installed apps, and
// JSON-schema validation of what crosses a bulkhead.
//
// Everything an app authors — its description, its functions'
// descriptions, its output and its errors — is untrusted. It reaches the
// app's own spoke only; across a bulkhead only schema-validated values
// travel (DESIGN.md §3, invariant 1).
//
// Catalog, Registry and compiled schemas are immutable once built and safe
// for concurrent use. An App's Call may be called from its spoke's
// goroutine only; apps need not be safe for concurrent calls.
package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Effect is what calling a function does to the world.
type Effect string

// Effects, from harmless to irreversible.
const (
	EffectRead         Effect = "read"
	EffectWrite        Effect = "write"
	EffectIrreversible Effect = "irreversible"
)

// Function is one function of an app, as the app declares it.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description"` // app-authored
	Params      json.RawMessage `json:"params"`      // JSON schema of the arguments (an object)
	Result      json.RawMessage `json:"result"`      // JSON schema of the result
	Effect      Effect          `json:"effect"`
	// Key names the decisive arguments (a recipient, a path, a command,
	// an amount, a target) that a dialog shows first and whose
	// provenance decides whether a call is expected; empty: the hub's
	// default (KeyArgs).
	Key []string `json:"key,omitempty"`
	// Changes names the arguments that name a file the call creates,
	// writes or removes, relative to the folder the app works in (the
	// files app's path): the hub checks each against the paths other
	// programs run later (sandbox.Protected) and says so in the dialog.
	// Only an app of bulkhead's own, which changes exactly the file the
	// argument names (never through a link), declares it.
	Changes []string `json:"changes,omitempty"`
}

// KeyArgs names the function's decisive arguments (see the package
// function KeyArgs).
func (f Function) KeyArgs() []string { return KeyArgs(f.Key, f.Params) }

// Manifest declares an app.
type Manifest struct {
	Name        string `json:"name"`
	Description string `json:"description"` // app-authored: reaches only the app's own spoke
	Functions   []Function
	// Provides maps catalog functionalities to the app's own functions.
	Provides map[string]string
	// Clearance lists the data labels the app may receive.
	Clearance []string
	// Labels are the labels its outputs carry.
	Labels []string
	// Model overrides the spoke model for this app ("" = configured).
	Model string
	// Hosts it may reach (for apps whose traffic the hub carries).
	Hosts []string
	// Demo marks the simulated apps of the IsolateGPT case studies.
	Demo bool
}

// Function returns the named function.
func (m Manifest) Function(name string) (Function, bool) {
	for _, f := range m.Functions {
		if f.Name == name {
			return f, true
		}
	}
	return Function{}, false
}

// KV is an app's own memory namespace (a *memory.Namespace).
type KV interface {
	Get(key string) ([]byte, error)
	Set(key string, val []byte) error
	Delete(key string) error
	Keys(prefix string) ([]string, error)
}

// Call is one function call.
type Call struct {
	Function string
	Args     json.RawMessage
	// Memory is the app's own namespace; nil for apps that keep nothing.
	Memory KV
	// NotFound is what Memory.Get returns for a missing key.
	NotFound error
}

// App is an installed app. Call returns the function's result as JSON, or
// an error whose text is shown to the app's own spoke model only.
type App interface {
	Manifest() Manifest
	Call(ctx context.Context, c Call) (json.RawMessage, error)
}

// Explainer is implemented by apps that can say, without doing anything,
// what a call would touch — what an id denotes (an email's sender and
// subject), where a path leads (through a symbolic link) — so that a
// dialog can show it next to the arguments. What it says is the app's
// word, shown as such; the hub never judges by it.
type Explainer interface {
	Explain(ctx context.Context, c Call) (string, error)
}

// Previewer is implemented by apps that can say, without doing
// anything, what a writing call would replace: the file as it is now and
// as the call would leave it, for the dialog's diff (the hub computes
// it). What it returns is data — the file's words — and is shown as
// such.
type Previewer interface {
	Preview(ctx context.Context, c Call) (Preview, error)
}

// Preview is what a writing call would change.
type Preview struct {
	Path string // as the app names it
	// Before is its content now ("" and Exists false for a new file);
	// After what the call leaves ("" for a delete). Field names the
	// argument that holds After, which a dialog then shows as the change
	// instead of as a value.
	Before, After string
	Exists        bool
	Field         string
	// Unshown says why the content cannot be shown (binary, too large),
	// if so.
	Unshown string
}

// PerSpoke is implemented by apps that run out of process (MCP servers):
// each spoke gets its own instance, which owns its child process; the spoke
// closes it (io.Closer) when it stops.
type PerSpoke interface {
	App
	// NewInstance returns a fresh instance; its process starts on first use.
	NewInstance() App
}

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,40}$`)

// Check validates a manifest against a catalog: names, effects, schemas,
// and that every provided functionality exists and maps to a function
// whose effect is the catalog's.
func (m Manifest) Check(cat *Catalog) error {
	var errs []error
	if !namePattern.MatchString(m.Name) || m.Name == "vanilla" || m.Name == "hub" {
		errs = append(errs, fmt.Errorf("app name %q: lower-case letters, digits and _; not vanilla or hub", m.Name))
	}
	seen := map[string]bool{}
	for _, f := range m.Functions {
		if !namePattern.MatchString(f.Name) || f.Name == RequestFunctionality {
			errs = append(errs, fmt.Errorf("%s: function name %q", m.Name, f.Name))
		}
		if seen[f.Name] {
			errs = append(errs, fmt.Errorf("%s: function %q declared twice", m.Name, f.Name))
		}
		seen[f.Name] = true
		switch f.Effect {
		case EffectRead, EffectWrite, EffectIrreversible:
		default:
			errs = append(errs, fmt.Errorf("%s.%s: effect %q", m.Name, f.Name, f.Effect))
		}
		if _, err := Compile(f.Params); err != nil {
			errs = append(errs, fmt.Errorf("%s.%s params: %w", m.Name, f.Name, err))
		}
		if _, err := Compile(f.Result); err != nil {
			errs = append(errs, fmt.Errorf("%s.%s result: %w", m.Name, f.Name, err))
		}
	}
	for fn, own := range m.Provides {
		entry, ok := cat.Get(fn)
		if !ok {
			errs = append(errs, fmt.Errorf("%s provides %q, which is not in the catalog", m.Name, fn))
			continue
		}
		f, ok := m.Function(own)
		if !ok {
			errs = append(errs, fmt.Errorf("%s maps %q to unknown function %q", m.Name, fn, own))
			continue
		}
		if entry.Effect.rank() > f.Effect.rank() {
			errs = append(errs, fmt.Errorf("%s.%s is %s but catalog %q is %s", m.Name, own, f.Effect, fn, entry.Effect))
		}
	}
	return errors.Join(errs...)
}

func (e Effect) rank() int {
	switch e {
	case EffectRead:
		return 0
	case EffectWrite:
		return 1
	default:
		return 2
	}
}

// Stricter returns the more dangerous of two effects.
func Stricter(a, b Effect) Effect {
	if a.rank() >= b.rank() {
		return a
	}
	return b
}

// RequestFunctionality is the tool every app spoke has for asking the hub
// for a catalog functionality another app provides.
const RequestFunctionality = "request_functionality"

type privateKey struct{}

// WithPrivate marks ctx as a private turn's (a private query, or a turn
// of a private chat): an out-of-process app called with it writes nothing
// of what it says on the side (its stderr) to bulkhead's log.
func WithPrivate(ctx context.Context) context.Context {
	return context.WithValue(ctx, privateKey{}, true)
}

// IsPrivate reports whether ctx is a private turn's (WithPrivate).
func IsPrivate(ctx context.Context) bool {
	p, _ := ctx.Value(privateKey{}).(bool)
	return p
}

type zoneKey struct{}

// WithZone marks ctx as the work of a turn asked by a person in zone
// loc: an app that reads the time, or "today", reads it there.
func WithZone(ctx context.Context, loc *time.Location) context.Context {
	return context.WithValue(ctx, zoneKey{}, loc)
}

// ZoneOf is the asking person's zone (WithZone), or time.Local.
func ZoneOf(ctx context.Context) *time.Location {
	if l, ok := ctx.Value(zoneKey{}).(*time.Location); ok && l != nil {
		return l
	}
	return time.Local
}

// Network asks whether an out-of-process app may connect to an endpoint
// ("host:port") of those its config names, while its process runs: the
// hub puts it to the user as a `network` permission (DESIGN.md §4).
// Allowed, the Lease says for how long: the process that uses the access
// holds the lease, and is stopped when it ends (invariant 11).
type Network interface {
	AllowNetwork(ctx context.Context, app, endpoint string) (Lease, bool)
}

// Lease is the access one permission decision gave a process: it ends
// when what allowed it ends — the grant revoked or expired, the session
// that answered gone (*permissions.Lease).
type Lease interface {
	// Ended reports whether the access has ended.
	Ended() bool
	// For reports whether a call made with ctx may use the access (a
	// session's answer serves that session's calls only).
	For(ctx context.Context) bool
	// Hold registers the process that uses the access (name: the app)
	// and how to stop it; stop is called when the lease ends, at once if
	// it has. release unregisters.
	Hold(name string, stop func()) (release func())
}

type networkKey struct{}

// WithNetwork gives the calls made with ctx someone to ask for network
// endpoints (the turn's hub). An app's process started without one has
// no network.
func WithNetwork(ctx context.Context, n Network) context.Context {
	return context.WithValue(ctx, networkKey{}, n)
}

// NetworkOf is the asker WithNetwork put on ctx, or nil.
func NetworkOf(ctx context.Context) Network {
	n, _ := ctx.Value(networkKey{}).(Network)
	return n
}
