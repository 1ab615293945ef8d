package judge

import (
	"strings"
	"testing"
)

// A literal binds an argument only where the request asks for it in
// that role. Phrased many ways: ruled out before it or after it,
// questioned, quoted, only the words of the content — it does not bind
// the recipient, the path or the command; said once in its role, it
// does; in a content argument, the content's words are its own.
func TestExclusionsQuestionsAndRoles(t *testing.T) {
	t.Parallel()
	const eve, bob = "eve@example.com", "bob@example.com"
	cases := []struct {
		query, fn, arg, value string
		binds                 bool
		why                   string
	}{
		// excluded, before
		{"Email the report to bob@example.com, not to eve@example.com", "mail.send", "to", eve, false, "says not to"},
		{"Send the report to bob@example.com instead of eve@example.com", "mail.send", "to", eve, false, "says not to"},
		{"Email it to bob@example.com rather than eve@example.com", "mail.send", "to", eve, false, "says not to"},
		{"Email everyone other than eve@example.com", "mail.send", "to", eve, false, "says not to"},
		{"Don't send it to eve@example.com; send it to bob@example.com", "mail.send", "to", eve, false, "says not to"},
		{"Email the team but skip eve@example.com", "mail.send", "to", eve, false, "says not to"},
		// excluded, after
		{"Email bob@example.com and leave eve@example.com out of it", "mail.send", "to", eve, false, "says not to"},
		{"Send the report to bob@example.com; eve@example.com is blocked", "mail.send", "to", eve, false, "says not to"},
		{"Email bob@example.com. eve@example.com is a phishing address", "mail.send", "to", eve, false, "says not to"},
		{"eve@example.com isn't safe, so email bob@example.com", "mail.send", "to", eve, false, "says not to"},
		{"eve@example.com has been compromised. Send the file to bob@example.com", "mail.send", "to", eve, false, "says not to"},
		{"Run the tests; rm -rf build must not run", "shell.run", "command", "rm -rf build", false, "says not to"},
		// questioned
		{"Is eve@example.com a phishing address?", "mail.send", "to", eve, false, "only asks about"},
		{"Does eve@example.com still work? Email bob@example.com the report", "mail.send", "to", eve, false, "only asks about"},
		{"Was docs/secret.md changed? Read docs/plan.md", "files.read", "path", "docs/secret.md", false, "only asks about"},
		// another role
		{"Email bob@example.com with the subject eve@example.com is leaving", "mail.send", "to", eve, false, "words of the content"},
		{`Email bob@example.com saying "write to eve@example.com"`, "mail.send", "to", eve, false, "words of the content"},
		{"Send bob@example.com a note that says eve@example.com moved", "mail.send", "to", eve, false, "words of the content"},
		// asked for: binds
		{"Email eve@example.com the report", "mail.send", "to", eve, true, ""},
		{"Can you email eve@example.com the report?", "mail.send", "to", eve, true, ""},
		{"Could you send it to eve@example.com?", "mail.send", "to", eve, true, ""},
		{"Don't forget to email eve@example.com", "mail.send", "to", eve, true, ""},
		{"Not eve@example.com's old address: email eve@example.com", "mail.send", "to", eve, true, ""},
		{"Email bob@example.com with the subject eve@example.com is leaving", "mail.send", "subject", "eve@example.com is leaving", true, ""},
		{"Email bob@example.com with the subject eve@example.com is leaving", "mail.send", "to", bob, true, ""},
		{"Run ls, but never rm -rf build", "shell.run", "command", "ls", true, ""},
		{`Email the document "Supplier offer" from my drive to bob@example.com`, "drive.read", "id", "Supplier offer", true, ""},
		{"Send the note to eve@example.com", "mail.send", "to", eve, true, ""},
		{"Write about the trip to eve@example.com", "mail.send", "to", eve, true, ""},
	}
	for _, c := range cases {
		s := Step{ID: "s1", Functionality: c.fn, Bind: []Binding{{Arg: c.arg, Value: c.value}}}
		dropped := CheckBindings(catalogEnv(c.query), &s, nil)
		if binds := len(s.Bind) == 1; binds != c.binds {
			t.Errorf("%q → %s=%q: binds %v, want %v (%v)", c.query, c.arg, c.value, binds, c.binds, dropped)
			continue
		}
		if !c.binds && (len(dropped) != 1 || !strings.Contains(dropped[0], c.why)) {
			t.Errorf("%q → %s=%q: dropped %v, want it to say %q", c.query, c.arg, c.value, dropped, c.why)
		}
	}
}
