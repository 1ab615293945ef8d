package hub

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// ServerOrder keeps what the hub learned of each model server it plans
// with, by host: whether the server runs two requests at once (so a
// draft goes ahead of the planner: draft.go), and how long the planner's
// request takes to its first byte when it runs alone. It is kept in a
// file in the data directory, so a new serving process starts with what
// the last one learned; a learned order is given up only on evidence that
// the server runs one request at a time. Hosts are kept without the
// credentials a URL may carry.
type ServerOrder struct {
	path string // "" keeps it in memory only

	mu    sync.Mutex
	hosts map[string]serverFacts
	// seats: which servers hold a slot for the calls other than the
	// planner's (seat.go); known only while this process runs.
	seats seating
}

type serverFacts struct {
	SideBySide bool `json:"side_by_side"`
	// Serial: the server was seen running one request at a time (a draft
	// got no piece while the planner streamed, or waited for the whole
	// plan); SideBySide and Serial both false: not known yet. It is
	// weaker evidence than SideBySide (a busy server looks serial too), so
	// it is probed again once serialFor has passed since it was learned.
	Serial bool `json:"serial,omitempty"`
	// PlanFirstByte is the planner's time from its request to its first
	// byte the last time it ran alone (0: not seen yet).
	PlanFirstByte time.Duration `json:"plan_first_byte_ns,omitempty"`
	// Learned is when SideBySide, Serial or PlanFirstByte last changed.
	Learned time.Time `json:"learned"`
	// Probes counts the drafts sent ahead of the planner while the order
	// was not known (up to draftProbes): a piece of one while the planner
	// streams teaches that the server runs both at once, whatever the
	// plan's length.
	Probes int `json:"probes,omitempty"`
	// ProbedAt is when the last probe was sent: spent probes are sent
	// again once probeAgain has passed (a draft that ended before the
	// planner's first byte teaches nothing; a server may get more slots).
	ProbedAt time.Time `json:"probed_at,omitzero"`
	// AppsRun: the last plan made where a draft waited for it needed
	// apps. Requests come in runs, so until a plan is plain chat again
	// the draft does not go ahead, nor probe, and there is no triage
	// (draft.go, triage.go): a run of app requests pays neither. A
	// chat's first request continues no run, and on a server known to
	// run both at once the draft goes ahead all the same (startDraft).
	AppsRun bool `json:"apps_run,omitempty"`
}

// serialFor is how long a server learned to be serial is taken as such.
const serialFor = time.Hour

func (f serverFacts) serialNow() bool {
	return f.Serial && time.Since(f.Learned) < serialFor
}

// mayRunTwo: the server is known to run two requests at once, or may
// (a probe is due: its order is being learned).
func mayRunTwo(f serverFacts) bool {
	return f.SideBySide || !f.serialNow() && (f.Probes < draftProbes || time.Since(f.ProbedAt) > probeAgain)
}

// orderKey is a host as the order keeps it: without any credentials its
// URL carries.
func orderKey(host string) string {
	if u, err := url.Parse(host); err == nil && u.User != nil {
		u.User = nil
		return u.String()
	}
	return host
}

// OpenServerOrder reads the order kept at path (none yet, or unreadable:
// nothing learned). path "" keeps it in memory.
func OpenServerOrder(path string) *ServerOrder {
	s := &ServerOrder{path: path, hosts: map[string]serverFacts{}}
	if path == "" {
		return s
	}
	if b, err := os.ReadFile(path); err == nil && len(b) <= 1<<20 {
		_ = json.Unmarshal(b, &s.hosts) // a broken file is nothing learned
		if s.hosts == nil {
			s.hosts = map[string]serverFacts{}
		}
	}
	return s
}

func (s *ServerOrder) get(host string) serverFacts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hosts[orderKey(host)]
}

// update changes what is known of host and keeps it (best effort: the
// order is an optimisation, never a reason to fail a turn).
func (s *ServerOrder) update(host string, change func(*serverFacts)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	host = orderKey(host)
	f := s.hosts[host]
	before := f
	change(&f)
	if f == before {
		return
	}
	if f.SideBySide != before.SideBySide || f.Serial != before.Serial || f.PlanFirstByte != before.PlanFirstByte {
		f.Learned = time.Now().UTC()
	}
	s.hosts[host] = f
	if s.path == "" {
		return
	}
	b, err := json.MarshalIndent(s.hosts, "", "  ")
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".servers-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		_ = os.Remove(tmp.Name())
		return
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		_ = os.Remove(tmp.Name())
	}
}

// SideBySide reports whether host was seen running two requests at once.
func (s *ServerOrder) SideBySide(host string) bool { return s.get(host).SideBySide }

// hostIn names the model server a call of m under ctx goes to ("" when m
// cannot say).
func hostIn(ctx context.Context, m any) string {
	if in, ok := m.(interface{ HostIn(context.Context) string }); ok {
		return in.HostIn(ctx)
	}
	if h, ok := m.(interface{ Host() string }); ok {
		return h.Host()
	}
	return ""
}
