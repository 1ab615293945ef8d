package tui

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	permscreen "github.com/bulkhead-dev/bulkhead/tui/screens/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// A session grant made in a dialog, limited to an hour, decides the next
// matching request, shows on the manager with its expiry, and once revoked
// there (r, y) is gone from the broker: the next request asks again.
func TestDialogGrantShowsOnTheManagerAndRevokes(t *testing.T) {
	t.Parallel()
	r := newAppRig(t, ridesInTurn(), allowData)
	opts := r.options()
	opts.Broker = r.broker
	d := newDriver(t, opts, 110, 32)

	d.typeText(ridesQuery)
	d.key(keyEnter)
	d.until("Run metro_hail?")
	d.graceOver()
	d.key(char('s'))
	if v := d.view(); !strings.Contains(v, "Limits of this session grant") || !strings.Contains(v, "▸ expires  ← none →") {
		t.Fatalf("s must open the caveat step:\n%s", v)
	}
	d.key(keyRight) // expires: 1 hour
	if p := d.model().perm; p.Scope() != "allow exec metro_hail (ride.estimate_fare), for 1 hour, for this session" ||
		!strings.Contains(d.view(), "Saves: allow exec metro_hail (ride.estimate_fare), for 1 hour, for") {
		t.Fatalf("the step must show the exact scope:\n%s", d.view())
	}
	before := time.Now()
	d.key(keyEnter)
	after := time.Now()
	d.until("Run quick_ride?")
	d.graceOver()
	d.key(char('o'))
	d.idle()

	grants := r.broker.Grants()
	if len(grants) != 1 {
		t.Fatalf("want the one session grant, broker holds %+v", grants)
	}
	g := grants[0]
	exp := g.Caveats.Expires
	if g.Kind != permissions.KindExec || g.Object != "metro_hail" || g.Permanent || g.Origin != "dialog" ||
		exp.Before(before.Add(time.Hour)) || exp.After(after.Add(time.Hour)) || g.Caveats.UsesLeft != 0 || len(g.Caveats.Args) != 0 {
		t.Fatalf("grant %+v", g)
	}

	// The grant decides metro_hail this time: only quick_ride asks.
	d.typeText(ridesQuery)
	d.key(keyEnter)
	d.until("Run quick_ride?")
	d.graceOver()
	d.key(char('o'))
	d.idle()
	var bySource []string
	for _, e := range r.decisions(t) {
		if e.Request.Object == "metro_hail" {
			bySource = append(bySource, string(e.Decision.Source))
		}
	}
	if strings.Join(bySource, ",") != "user,grant" {
		t.Fatalf("metro_hail decided by %v, want user then grant", bySource)
	}

	d.key(ctrl('g'))
	d.idle()
	v := d.view()
	until := "until " + widget.ShortStamp(exp, time.Now())
	for _, want := range []string{"Permissions", "Grants 1", "exec", "hub → metro_hail", "ride.estimate_fare", "session · " + until, "dialog",
		"── grant " + g.ID, "(" + widget.Span(time.Until(exp)), "left)", "used 2 times", "origin:  dialog (your answer)"} {
		if !strings.Contains(v, want) {
			t.Errorf("manager lacks %q:\n%s", want, v)
		}
	}
	d.key(char('r'))
	d.idle()
	if v := d.view(); !strings.Contains(v, "revoke exec hub → metro_hail ride.estimate_fare?") || !strings.Contains(v, "Revoke") || !strings.Contains(v, "Keep") {
		t.Fatalf("r must ask first:\n%s", v)
	}
	d.key(char('n'))
	d.idle()
	if len(r.broker.Grants()) != 1 || !strings.Contains(d.view(), "nothing revoked") {
		t.Fatalf("n must keep the grant:\n%s", d.view())
	}
	// An app's process holds access the grant gave (as an MCP server
	// holds a network grant): the revoke stops it, and says so.
	stopped := false
	r.broker.Lease("", permissions.Decision{GrantID: g.ID, Answer: permissions.AnswerSession, Allowed: true, Source: permissions.SourceGrant}).
		Hold("sock", func() { stopped = true })
	d.key(char('r'))
	d.idle()
	d.key(char('y'))
	d.idle()
	if gs := r.broker.Grants(); len(gs) != 0 {
		t.Fatalf("revoked, yet the broker holds %+v", gs)
	}
	v = d.view()
	if !strings.Contains(v, "revoked exec hub → metro_hail — sock restarted") || !stopped || !strings.Contains(v, "no grants") || !strings.Contains(v, "Grants 0") {
		t.Fatalf("after the revoke (the process stopped: %v):\n%s", stopped, v)
	}
	d.key(keyEsc)
	if d.model().overlay != overlayNone || d.model().mgr != nil {
		t.Fatal("esc must close the manager")
	}

	// Revoked: metro_hail asks again.
	d.typeText(ridesQuery)
	d.key(keyEnter)
	d.until("Run metro_hail?")
	d.graceOver()
	d.key(char('o'))
	d.until("Run quick_ride?")
	d.graceOver()
	d.key(char('o'))
	d.idle()
}

// sgr is the escape sequence style st opens with.
func sgr(st func(...string) string) string { return strings.Split(st("x"), "x")[0] }

func lineWith(v, s string) string {
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(ansi.Strip(l), s) {
			return l
		}
	}
	return ""
}

// The grants tab lists every grant and rule, the invalid one in red; the
// filter narrows it as it is typed; R and X ask before revoking.
func TestManagerGrantsFilterAndRevokeAll(t *testing.T) {
	t.Parallel()
	d, b := managerRig(t, 120, 40)
	d.key(ctrl('g'))
	d.idle()
	v := d.view()
	for _, want := range []string{"Grants 4", "Action log 11", "TRUSTED SESSION", "INVALID signature: ignored", "session · until 10:00 · 4 uses left",
		"permanent · query=Q3 financial report", "deny · permanent", "3 rules of your config", "rule: deny", "travel_mate → *",
		"✗ INVALID: its signature does not verify"} {
		if !strings.Contains(v, want) {
			t.Errorf("grants tab lacks %q:\n%s", want, v)
		}
	}
	d.key(keyDown) // off the invalid row, which the selection would colour
	raw := d.m.View().Content
	th := d.model().th
	if l := lineWith(raw, "hub → shell"); !strings.Contains(l, sgr(th.Err.Render)) {
		t.Errorf("the invalid grant must be red: %q", l)
	}
	if l := lineWith(raw, "drive.search"); strings.Contains(l, sgr(th.Err.Render)) {
		t.Errorf("a valid grant is not red: %q", l)
	}

	d.key(char('/'))
	d.typeText("drive")
	v = d.view()
	if !strings.Contains(v, "drive.search") || !strings.Contains(v, "drive.read") || strings.Contains(v, "mail.search") ||
		strings.Contains(v, "shell.run") || strings.Contains(v, "rule: ask") || !strings.Contains(v, "/ drive") || !strings.Contains(v, "Grants 2 of 4") {
		t.Fatalf("filter \"drive\":\n%s", v)
	}
	d.typeText(" deny")
	if v := d.view(); strings.Contains(v, "drive.search") || !strings.Contains(v, "drive.read") {
		t.Fatalf("filter \"drive deny\" must keep only the remembered deny:\n%s", v)
	}
	d.key(keyEnter) // keep it; keys move again
	d.key(char('R'))
	d.idle()
	if v := d.view(); !strings.Contains(v, "revoke every grant involving mail (3)?") {
		t.Fatalf("R must name the app and count its grants:\n%s", v)
	}
	d.key(char('y'))
	d.idle()
	var left []string
	for _, g := range b.Grants() {
		left = append(left, g.Object)
	}
	if strings.Join(left, ",") != "shell" {
		t.Fatalf("R on a mail grant must revoke every grant involving mail; left %v", left)
	}
	d.key(keyEsc) // clears the filter
	if v := d.view(); !strings.Contains(v, "shell.run") || d.model().overlay != overlayManager {
		t.Fatalf("esc with a filter must clear it, not close:\n%s", v)
	}
	d.key(keyEnd) // the last rule
	d.key(char('r'))
	if v := d.view(); !strings.Contains(v, "rules come from your config ("+configFile) {
		t.Fatalf("r on a rule:\n%s", v)
	}
	d.key(char('X'))
	d.idle()
	if v := d.view(); !strings.Contains(v, "revoke ALL 1 grant?") {
		t.Fatalf("X must ask:\n%s", v)
	}
	d.key(char('y'))
	d.idle()
	if n := len(b.Grants()); n != 0 {
		t.Fatalf("X left %d grants", n)
	}
}

// The action log shows each decision with who made it, and the hub's
// notes, newest first; / searches it; the detail pane has the whole
// request; e exports it as JSON Lines.
func TestManagerActionLogSearchAndExport(t *testing.T) {
	t.Parallel()
	d, b := managerRig(t, 120, 40)
	d.key(ctrl('g'))
	d.idle()
	d.key(keyTab)
	v := d.view()
	rows := []struct{ what, dec, by string }{
		{`drive.read({"id":"d2"})`, "off-plan", "hub"},
		{"metro_hail · ride.estimate_fare", "✓ once", "policy"},
		{"mail → drive drive.read", "✗ denied", "user"},
		{"planner output unusable twice", "plan", "hub"},
		{"masked 1 span", "masked", "hub"},
		{"travel_mate → health_companion", "✗ denied", "rule"},
		{"calc · calc.evaluate", "✓ once", "rule"},
		{"mail.send", "✗ denied", "user"},
		{"mail · mail.search", "✓ session", "grant"},
		{"mail → drive drive.search", "✓ permanent", "user"},
	}
	lines := strings.Split(v, "\n")
	last := -1
	for _, r := range rows {
		i := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, r.what) })
		if i <= last {
			t.Fatalf("log lacks %q, or out of order (newest first):\n%s", r.what, v)
		}
		last = i
		if l := lines[i]; !strings.Contains(l, r.dec) || !regexp.MustCompile(`\s`+r.by+`\s`).MatchString(l) {
			t.Errorf("%q: want %s by %s: %q", r.what, r.dec, r.by, l)
		}
	}
	if l := lineWith(v, "mail.send"); !strings.Contains(l, "✗ denied") || !strings.Contains(l, "not that address") {
		t.Errorf("the denied send with its note: %q", l)
	}

	d.key(char('/'))
	d.typeText("attacker")
	d.key(keyEnter)
	v = d.view()
	for _, want := range []string{"Action log 1 of 11", "irreversible", "detail: mail wants to send", `"to": "attacker@evil.example"`,
		"⚠ NOT expected by the plan; cannot be undone", "decision: denied by user", "note: not that address"} {
		if !strings.Contains(v, want) {
			t.Errorf("searched detail lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "metro_hail") {
		t.Errorf("the search must leave the other entries out:\n%s", v)
	}
	d.key(keyEnter) // the detail takes the screen
	if v := d.view(); !strings.Contains(v, `"attachment": "d1"`) || strings.Contains(v, "REQUEST") {
		t.Errorf("full detail:\n%s", v)
	}
	d.key(keyEsc)
	d.key(keyEsc) // clear the search

	d.key(char('e'))
	d.idle()
	v = d.view()
	m := regexp.MustCompile(`exported 11 entries to (\S+\.jsonl)`).FindStringSubmatch(v)
	if m == nil {
		t.Fatalf("no export notice:\n%s", v)
	}
	dir := d.model().opts.DataDir
	if !strings.HasPrefix(m[1], dir) {
		t.Fatalf("exported to %s, not under the data dir %s", m[1], dir)
	}
	f, err := os.Open(m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st, _ := f.Stat(); st.Mode().Perm() != 0o600 {
		t.Errorf("export mode %v, want 0600", st.Mode().Perm())
	}
	want, _ := b.Actions()
	var got []permissions.Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e permissions.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", len(got)+1, err, sc.Text())
		}
		got = append(got, e)
	}
	if len(got) != len(want) {
		t.Fatalf("exported %d lines, the log has %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Seq != want[i].Seq || got[i].Request.ID != want[i].Request.ID || (got[i].Note == nil) != (want[i].Note == nil) {
			t.Errorf("line %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
}

// ctrl+y and /trusted flip the broker's trusted-session mode: the status
// bar and the manager say so, and expected requests stop asking.
func TestTrustedSessionToggle(t *testing.T) {
	t.Parallel()
	r := newAppRig(t, ridesInTurn(), allowData)
	opts := r.options()
	opts.Broker = r.broker
	d := newDriver(t, opts, 100, 30)
	status := func() string { v := strings.Split(d.view(), "\n"); return v[len(v)-1] }
	if strings.Contains(status(), "TRUSTED") {
		t.Fatal("trusted from the start")
	}
	d.key(ctrl('y'))
	if !r.broker.Trusted() || !strings.Contains(status(), " TRUSTED ") || !strings.Contains(d.view(), "trusted session on") {
		t.Fatalf("ctrl+y: trusted %v\n%s", r.broker.Trusted(), d.view())
	}
	d.ask(ridesQuery) // expected, reversible: nothing asks
	if n := len(d.raw); n != 0 {
		t.Fatalf("%d dialogs opened in a trusted session", n)
	}
	for _, e := range r.decisions(t) {
		if e.Request.Kind == permissions.KindExec && e.Decision.Source != permissions.SourcePolicy {
			t.Errorf("exec %s decided by %s, want policy", e.Request.Object, e.Decision.Source)
		}
	}
	d.key(ctrl('g'))
	d.idle()
	d.key(keyTab)
	if v := d.view(); !strings.Contains(v, "TRUSTED SESSION") || !strings.Contains(v, "trusted session: rou") {
		t.Fatalf("the manager must show trusted mode and its decisions:\n%s", v)
	}
	d.key(ctrl('y'))
	if r.broker.Trusted() || !strings.Contains(d.view(), "trusted session off") || strings.Contains(status(), "TRUSTED") {
		t.Fatalf("ctrl+y in the manager must turn it off:\n%s", d.view())
	}
	d.key(keyEsc)
	d.typeText("/trusted")
	d.key(keyEnter)
	if !r.broker.Trusted() || !strings.Contains(status(), "TRUSTED") || d.model().input.value() != "" {
		t.Fatalf("/trusted must turn it on and clear the input:\n%s", d.view())
	}
}

// /permissions, /log and /apps open their screens; other text starting
// with a slash is a query.
func TestSlashCommands(t *testing.T) {
	t.Parallel()
	d, _ := managerRig(t, 100, 30)
	d.typeText("/permissions")
	d.key(keyEnter)
	d.idle()
	if m := d.model(); m.overlay != overlayManager || m.mgr.Tab() != permscreen.Grants || !strings.Contains(d.view(), "Grants 4") {
		t.Fatalf("/permissions:\n%s", d.view())
	}
	d.key(keyEsc)
	d.typeText("/log")
	d.key(keyEnter)
	d.idle()
	if m := d.model(); m.overlay != overlayManager || m.mgr.Tab() != permscreen.Log {
		t.Fatalf("/log:\n%s", d.view())
	}
	d.key(keyEsc)
	d.typeText("/apps")
	d.key(keyEnter)
	d.idle()
	if d.model().overlay != overlayApps {
		t.Fatalf("/apps:\n%s", d.view())
	}
	d.key(keyEsc)
	d.ask("/etc/hosts: what is it for?")
	if v := d.view(); !strings.Contains(v, "┃ /etc/hosts: what is it for?") {
		t.Fatalf("a query that starts with a slash must be sent:\n%s", v)
	}
}

// A network endpoint is put to the user in a dialog that names the app,
// the host and the port and carries the hub's warning; allowed
// permanently, it is a grant the manager lists and revokes.
func TestNetworkGrantInTheDialogAndTheManager(t *testing.T) {
	t.Parallel()
	r := newAppRig(t, ridesInTurn())
	opts := r.options()
	opts.Broker = r.broker
	d := newDriver(t, opts, 110, 32)
	req := permissions.Request{Kind: permissions.KindNetwork, Subject: "fetcher", Object: "api.example.com:443",
		Args:     json.RawMessage(`{"host":"api.example.com","port":"443"}`),
		Detail:   "fetcher's process may connect to api.example.com, port 443, until it stops",
		Warning:  "Network: fetcher could send anything it has read to api.example.com (port 443), and bulkhead cannot see what it sends.",
		Concerns: []permissions.Concern{permissions.ConcernNetwork}}
	done := make(chan permissions.Decision, 1)
	go func() {
		dec, _ := r.broker.Request(context.Background(), req)
		done <- dec
	}()
	d.until("fetcher wants to reach api.example.com, port 443")
	v := d.view()
	for _, want := range []string{"cannot see what it sends", "api.example.com"} {
		if !strings.Contains(v, want) {
			t.Errorf("the network dialog lacks %q:\n%s", want, v)
		}
	}
	d.graceOver()
	d.key(char('p'))
	d.key(keyEnter)
	d.idle()
	if dec := <-done; !dec.Allowed || dec.GrantID == "" {
		t.Fatalf("decision %+v", dec)
	}
	d.key(ctrl('g'))
	d.idle()
	if v := d.view(); !strings.Contains(v, "network") || !strings.Contains(v, "fetcher → api.example.com:443") {
		t.Fatalf("the manager must list the network grant:\n%s", v)
	}
	d.key(char('r'))
	d.idle()
	d.key(char('y'))
	d.idle()
	if gs := r.broker.Grants(); len(gs) != 0 {
		t.Fatalf("revoked, yet the broker holds %+v", gs)
	}
}

// A permission dialog that opens over any confirmation — the manager's
// revoke, the memory screen's forget, the chats list's delete — takes
// the keys: a note typed into it (y and enter included) never answers the
// confirmation, which ends as esc would once the dialog opens — one form
// at a time, wherever it lives. After the dialog nothing was removed, and
// a y answers no confirmation.
func TestADialogOverAConfirmationTakesItsKeys(t *testing.T) {
	t.Parallel()
	withPrompter := func(p *Prompter) func(*Options) { return func(o *Options) { o.Prompter = p } }
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, p *Prompter) (d *driver, count func() int)
		open  []tea.KeyPressMsg // the screen or list, then its question
		asks  string
		under overlay
		ended string // what the part says once its question ended unanswered ("" says nothing)
	}{
		{"revoke all grants", func(t *testing.T, p *Prompter) (*driver, func() int) {
			r := newRig(t, replies(ollamatest.Text("x")))
			b := seededBroker(t)
			opts := r.options()
			opts.Broker, opts.Rules, opts.DataDir, opts.Prompter = b, seededRules, t.TempDir(), p
			return newDriver(t, opts, 120, 40, atSeen), func() int { return len(b.Grants()) }
		}, []tea.KeyPressMsg{ctrl('g'), char('X')}, "revoke ALL", overlayManager, "nothing revoked"},
		{"forget the hub's memory", func(t *testing.T, p *Prompter) (*driver, func() int) {
			d, r := memoryRig(t, 120, 40, withPrompter(p))
			return d, func() int { return remembers(t, r.op, "hub") }
		}, []tea.KeyPressMsg{ctrl('e'), char('f')}, "forget everything the hub remembers?", overlayMemory, "nothing forgotten"},
		{"delete a chat", func(t *testing.T, p *Prompter) (*driver, func() int) {
			d, r := memoryRig(t, 120, 40, withPrompter(p)) // two chats in its log
			return d, func() int {
				cs, err := r.op.Chats()
				if err != nil {
					t.Fatal(err)
				}
				return len(cs)
			}
		}, []tea.KeyPressMsg{ctrl('o'), char('d')}, "delete “", overlayChats, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := NewPrompter()
			d, count := tc.setup(t, p)
			before := count()
			if before == 0 {
				t.Fatal("the fixture has nothing to remove")
			}
			for _, k := range tc.open {
				d.key(k)
				d.idle()
			}
			if v := d.view(); !strings.Contains(v, tc.asks) {
				t.Fatalf("the confirmation must ask %q:\n%s", tc.asks, v)
			}
			got := prompt(t, d, p, draftRequest)
			if m := d.model(); m.overlay != overlayPermission || m.under != tc.under {
				t.Fatalf("the dialog must open over %v: %v under %v", tc.under, m.overlay, m.under)
			}
			d.key(char('n'))
			d.typeText("yy")
			d.key(char('y'))
			d.key(keyEnter)
			d.idle()
			if dec := recvDecision(t, got); dec.Allowed || dec.Note != "yyy" {
				t.Fatalf("the note must deny with its text: %+v", dec)
			}
			d.idle()
			if n := count(); n != before {
				t.Fatalf("keys typed into the dialog's note removed something: %d of %d left", n, before)
			}
			v := d.view()
			if d.model().overlay != tc.under || strings.Contains(v, tc.asks) || !strings.Contains(v, tc.ended) {
				t.Fatalf("the confirmation must have ended as esc would (%q), its part back:\n%s", tc.ended, v)
			}
			d.key(char('y')) // no confirmation is waiting for it
			d.idle()
			if n := count(); n != before {
				t.Fatalf("a y after the dialog removed something: %d of %d left", n, before)
			}
		})
	}
}
