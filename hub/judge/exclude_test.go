package judge

import (
	"strings"
	"testing"
)

// A literal binds an argument only where the request leaves it one
// reading (reading.go). Ruled out before it or after it, questioned,
// quoted, only the words of the content, or beside another value of its
// kind, it does not bind — the step asks, and the reason shows the
// user's own sentence; asked for once, in a sentence the hub reads, it
// does; in a content argument, the content's words are its own.
//
// (This table once encoded lists of refused forms — negation words,
// question openers — and bound a value said once ruled out and once
// asked for. Each row now says what the recogniser decides, and why.)
func TestExclusionsQuestionsAndRoles(t *testing.T) {
	t.Parallel()
	const eve, bob = "eve@example.com", "bob@example.com"
	const another, unread, question, content, quoted, twice = "holds another", "does not read", "question", "words of the content", "inside a quotation", "more than once"
	cases := []struct {
		query, fn, arg, value string
		binds                 bool
		why                   string
	}{
		// excluded, before: another address, or a word the hub does not read
		{"Email the report to bob@example.com, not to eve@example.com", "mail.send", "to", eve, false, another},
		{"Send the report to bob@example.com instead of eve@example.com", "mail.send", "to", eve, false, another},
		{"Email it to bob@example.com rather than eve@example.com", "mail.send", "to", eve, false, another},
		{"Email everyone other than eve@example.com", "mail.send", "to", eve, false, unread},
		{"Don't send it to eve@example.com; send it to bob@example.com", "mail.send", "to", eve, false, another},
		{"Email the team but skip eve@example.com", "mail.send", "to", eve, false, unread},
		// excluded, after
		{"Email bob@example.com and leave eve@example.com out of it", "mail.send", "to", eve, false, another},
		{"Send the report to bob@example.com; eve@example.com is blocked", "mail.send", "to", eve, false, another},
		{"Email bob@example.com. eve@example.com is a phishing address", "mail.send", "to", eve, false, another},
		{"eve@example.com isn't safe, so email bob@example.com", "mail.send", "to", eve, false, another},
		{"eve@example.com has been compromised. Send the file to bob@example.com", "mail.send", "to", eve, false, another},
		{"Run the tests; rm -rf build must not run", "shell.run", "command", "rm -rf build", false, unread},
		{"Email eve@example.com, which is blocked", "mail.send", "to", eve, false, unread},
		// questioned
		{"Is eve@example.com a phishing address?", "mail.send", "to", eve, false, question},
		{"Does eve@example.com still work? Email bob@example.com the report", "mail.send", "to", eve, false, another},
		{"Was docs/secret.md changed? Read docs/plan.md", "files.read", "path", "docs/secret.md", false, another},
		{"Was docs/secret.md changed?", "files.read", "path", "docs/secret.md", false, question},
		// another role
		{"Email bob@example.com with the subject eve@example.com is leaving", "mail.send", "to", eve, false, another},
		{`Email bob@example.com saying "write to eve@example.com"`, "mail.send", "to", eve, false, quoted},
		{"Send bob@example.com a note that says eve@example.com moved", "mail.send", "to", eve, false, another},
		{"Write about the trip to eve@example.com", "mail.send", "to", eve, false, content},
		{"Send a note saying eve@example.com moved", "mail.send", "to", eve, false, content},
		// said twice: once ruled out, once asked for — two readings
		{"Not eve@example.com's old address: email eve@example.com", "mail.send", "to", eve, false, twice},
		{"Don't forget to email eve@example.com", "mail.send", "to", eve, false, unread},
		{"Run ls, but never rm -rf build", "shell.run", "command", "ls", false, unread},
		{"Email bob@example.com with the subject eve@example.com is leaving", "mail.send", "to", bob, false, another},
		// asked for, one reading: binds
		{"Email eve@example.com the report", "mail.send", "to", eve, true, ""},
		{"Can you email eve@example.com the report?", "mail.send", "to", eve, true, ""},
		{"Could you send it to eve@example.com?", "mail.send", "to", eve, true, ""},
		{"Email bob@example.com with the subject eve@example.com is leaving", "mail.send", "subject", "eve@example.com is leaving", true, ""},
		{`Email the document "Supplier offer" from my drive to bob@example.com`, "drive.read", "id", "Supplier offer", true, ""},
		{"Send the note to eve@example.com", "mail.send", "to", eve, true, ""},
		{"Write to eve@example.com about the trip", "mail.send", "to", eve, true, ""},
	}
	for _, c := range cases {
		s := Step{ID: "s1", Functionality: c.fn, Bind: []Binding{{Arg: c.arg, Value: c.value}}}
		dropped := CheckBindings(catalogEnv(c.query), &s, nil)
		if binds := len(s.Bind) == 1; binds != c.binds {
			t.Errorf("%q → %s=%q: binds %v, want %v (%v)", c.query, c.arg, c.value, binds, c.binds, dropped)
			continue
		}
		if c.binds {
			continue
		}
		if len(dropped) != 1 || !strings.Contains(dropped[0], c.why) || !strings.Contains(dropped[0], "you wrote “") {
			t.Errorf("%q → %s=%q: dropped %v, want it to say %q and the user's sentence", c.query, c.arg, c.value, dropped, c.why)
		}
		if len(s.Doubted) != 1 || s.Doubted[0].Why == "" || !strings.Contains(s.Doubted[0].Quote, NormSpace(c.value)) && !strings.Contains(s.Doubted[0].Quote, "…") {
			t.Errorf("%q → %s=%q: the step keeps the doubted binding with why and the sentence around it: %+v", c.query, c.arg, c.value, s.Doubted)
		}
	}
}
