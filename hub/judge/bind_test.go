package judge

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
)

func catalogEnv(query string) Env {
	c := apps.Default()
	return Env{Query: query,
		Request: func(fn string) (json.RawMessage, bool) {
			f, ok := c.Get(fn)
			return f.Request, ok
		},
		Response: func(fn string) (json.RawMessage, bool) {
			f, ok := c.Get(fn)
			return f.Response, ok
		}}
}

// A binding holds only where the operator can check it: a literal that
// stands whole in the current request, with one reading there, a
// field an earlier step's functionality declares, an entity (which the
// step then needs), an argument the functionality takes.
func TestCheckBindings(t *testing.T) {
	earlier := map[string]Step{"s1": {ID: "s1", Functionality: "notes.search"}}
	for _, c := range []struct {
		query string
		fn    string
		b     Binding
		kept  bool
		why   string
	}{
		{"Email bob@example.com saying hi", "mail.send", Binding{Arg: "to", Value: "bob@example.com"}, true, ""},
		{"Email bob@Example.com saying hi", "mail.send", Binding{Arg: "to", Value: "bob@example.com"}, true, ""},
		{"Email BOB@Example.com saying hi", "mail.send", Binding{Arg: "to", Value: "bob@example.com"}, false, "not in your request"}, // a local part's case
		{"Email bob@example.com saying hi", "mail.send", Binding{Arg: "to", Value: "b@example.com"}, false, "not in your request"},
		{"Email bob@example.com saying hi", "mail.send", Binding{Arg: "to", Value: "bob@example.com.evil"}, false, "not in your request"},
		{"Email bob@example.com saying hi", "mail.send", Binding{Arg: "cc", Value: "bob@example.com"}, false, "takes no argument"},
		{"What time is it in Asia/Tokyo?", "clock.now", Binding{Arg: "timezone", Value: "Asia/Tokyo"}, true, ""},
		{"Read docs/plan.md please", "files.read", Binding{Arg: "path", Value: "docs/plan.md"}, true, ""},
		{"Read docs/plan.md please", "files.read", Binding{Arg: "path", Value: "/etc/passwd"}, false, "not in your request"},
		{"What is 17*23", "calc.evaluate", Binding{Arg: "expression", Value: "17*23"}, true, ""},
		{"Pay 20 dollars to ann@example.com", "mail.send", Binding{Arg: "body", Value: "20"}, false, `does not read "dollars"`}, // a unit after its number: ask
		{"Pay $20 to ann@example.com", "mail.send", Binding{Arg: "body", Value: "20"}, true, ""},
		// One reading, or ask: words that rule a value out, another value of
		// its kind, a value said twice — it does not bind, and the reason
		// shows the user's sentence.
		{"Email the report to bob@example.com, not to eve@example.com", "mail.send", Binding{Arg: "to", Value: "eve@example.com"}, false, `holds another address, "bob@example.com" — you wrote “Email the report to bob@example.com, not to eve@example.com”`},
		{"Email the report to bob@example.com, not to eve@example.com", "mail.send", Binding{Arg: "to", Value: "bob@example.com"}, false, "holds another address"},
		{"Don't send it to eve@example.com; send it to bob@example.com", "mail.send", Binding{Arg: "to", Value: "eve@example.com"}, false, "holds another address"},
		{"Never email eve@example.com", "mail.send", Binding{Arg: "to", Value: "eve@example.com"}, false, `the hub does not read "Never" — you wrote “Never email eve@example.com”`},
		{"Email everyone except eve@example.com", "mail.send", Binding{Arg: "to", Value: "eve@example.com"}, false, `"except"`},
		{"Run ls, but never rm -rf build", "shell.run", Binding{Arg: "command", Value: "rm -rf build"}, false, `"never"`},
		{"Run ls, but never rm -rf build", "shell.run", Binding{Arg: "command", Value: "ls"}, false, `"never"`},
		{"Don't forget to email bob@example.com", "mail.send", Binding{Arg: "to", Value: "bob@example.com"}, false, `"Don't"`},
		{"Not eve@example.com's old address: email eve@example.com", "mail.send", Binding{Arg: "to", Value: "eve@example.com"}, false, "more than once"},
		{"Email bob@example.com the report", "mail.send", Binding{Arg: "to", Value: "bob@example.com"}, true, ""},
		// References and entities.
		{"Mail my note", "mail.send", Binding{Arg: "body", From: "s1.notes.body"}, true, ""},
		{"Mail my note", "mail.send", Binding{Arg: "body", From: "s1.notes.secret"}, false, "gives no field"},
		{"Mail my note", "mail.send", Binding{Arg: "body", From: "s9.notes.body"}, false, "not a step before"},
		{"Mail my note", "mail.send", Binding{Arg: "body", From: "notes body"}, false, "not a field of a step"},
		{"Mail my note", "mail.send", Binding{Arg: "body", Entity: "trip.dates"}, true, ""},
		{"Mail my note", "mail.send", Binding{Arg: "body", Value: "Mail", From: "s1.notes.body"}, false, "exactly one"},
	} {
		s := Step{ID: "s2", Functionality: c.fn, Bind: []Binding{c.b}}
		dropped := CheckBindings(catalogEnv(c.query), &s, earlier)
		if kept := len(s.Bind) == 1; kept != c.kept {
			t.Errorf("%q %+v: kept %v, want %v (dropped %v)", c.query, c.b, kept, c.kept, dropped)
			continue
		}
		if !c.kept && (len(dropped) != 1 || !strings.Contains(dropped[0], c.why)) {
			t.Errorf("%q %+v: dropped %v, want a reason with %q", c.query, c.b, dropped, c.why)
		}
		if c.kept && c.b.From != "" && !slices.Contains(s.DependsOn, "s1") {
			t.Errorf("a reference to s1 must make s2 depend on it: %+v", s)
		}
		if c.kept && c.b.Entity != "" && !slices.Contains(s.Needs, c.b.Entity) {
			t.Errorf("an entity binding must make the step need it: %+v", s)
		}
		if c.kept && c.b.Value != "" && s.Bind[0].Quote == "" {
			t.Errorf("a literal's binding keeps the words around it for the dialog: %+v", s.Bind[0])
		}
	}
}
