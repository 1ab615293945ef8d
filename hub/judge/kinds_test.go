package judge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/permissions"
)

// Forms of one value, and forms that only look like it. Lisu (U+A4D0…)
// is a script no code of the repository names: the rules must catch its
// look-alikes without a list of them.
const (
	cyrA      = "\u0430"             // CYRILLIC SMALL LETTER A
	greekO    = "\u03bf"             // GREEK SMALL LETTER OMICRON
	dottedI   = "\u0130"             // LATIN CAPITAL LETTER I WITH DOT ABOVE: strings.ToLower makes it i
	fullE     = "\uff45"             // FULLWIDTH LATIN SMALL LETTER E
	zwj       = "\u200d"             // ZERO WIDTH JOINER
	kelvin    = "\u212a"             // KELVIN SIGN: NFC makes it K
	lisuBOB   = "\ua4d0\ua4f3\ua4d0" // LISU LETTERS BA, O, BA: "BOB"
	lisuAPPLE = "\ua4ee\ua4d1\ua4d1\ua4e1\ua4f0"
	nfcCafe   = "caf\u00e9"
	nfdCafe   = "cafe\u0301"
	buecher   = "b\u00fccher.example"
	buecherPy = "xn--bcher-kva.example"
)

// Each kind's own rule, and nothing folded the kind does not fold: the
// forms that compare equal, and the look-alikes, invisible characters,
// other notations and near misses that must not.
func TestEqualityByKind(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name        string
		leaf, bound any
		same        bool
	}{
		// addresses: the domain by IDNA, folding ASCII case alone
		{"the domain in capitals", "bob@EXAMPLE.COM", "bob@example.com", true},
		{"a Unicode domain as typed", "bob@" + buecher, "bob@" + buecher, true},
		{"a Unicode domain, another ASCII label's case", "bob@b\u00fccher.EXAMPLE", "bob@" + buecher, true},
		{"a punycode domain in capitals", "bob@XN--BCHER-KVA.example", "bob@" + buecherPy, true},
		{"punycode is not the Unicode form", "bob@" + buecherPy, "bob@" + buecher, false},
		{"the Unicode form is not punycode", "bob@" + buecher, "bob@" + buecherPy, false},
		{"a capital outside ASCII is not folded", "bob@B\u00dcCHER.example", "bob@" + buecher, false},
		{"U+0130 in a domain", "bob@" + dottedI + "mail.example", "bob@imail.example", false},
		{"U+0130 in a domain, either side", "bob@imail.example", "bob@" + dottedI + "mail.example", false},
		{"a Cyrillic a in a domain", "bob@ex" + cyrA + "mple.com", "bob@example.com", false},
		{"a mixed-script label folds no case", "bob@EX" + cyrA + "MPLE.com", "bob@ex" + cyrA + "mple.com", false},
		{"a Greek omicron in a host", "https://g" + greekO + "ogle.com/", "https://google.com/", false},
		{"a fullwidth letter in a domain", "bob@" + fullE + "xample.com", "bob@example.com", false},
		{"a zero-width joiner in a domain", "bob@exam" + zwj + "ple.com", "bob@example.com", false},
		{"Lisu look-alikes of a domain", "bob@" + lisuAPPLE + ".com", "bob@APPLE.com", false},
		{"a trailing dot", "bob@example.com.", "bob@example.com", false},
		{"a local part's case", "Bob@example.com", "bob@example.com", false},
		{"a local part's case, all capitals", "BOB@EXAMPLE.COM", "bob@example.com", false},
		{"an address in curly quotes", "\u201cbob@example.com\u201d", "bob@example.com", false},
		// URLs: scheme and host by their rule, the rest byte for byte
		{"a URL's scheme and host in capitals", "HTTPS://SHOP.example:8443/pay", "https://shop.example:8443/pay", true},
		{"a URL's trailing slash", "https://shop.example/pay/", "https://shop.example/pay", false},
		{"a URL without its trailing slash", "https://shop.example/pay", "https://shop.example/pay/", false},
		{"a URL's port", "https://shop.example:8443/pay", "https://shop.example/pay", false},
		{"a URL's query", "https://shop.example/pay?to=eve", "https://shop.example/pay?to=bob", false},
		{"a URL's user", "https://eve@shop.example/pay", "https://shop.example/pay", false},
		{"U+0130 in a host", "https://" + dottedI + "mail.example/x", "https://imail.example/x", false},
		// paths: their bytes
		{"an NFD file name is not the NFC one", nfdCafe + ".md", nfcCafe + ".md", false},
		{"an NFD path is not the NFC one", "notes/" + nfdCafe + ".md", "notes/" + nfcCafe + ".md", false},
		{"an NFD path with a space", "my notes/" + nfdCafe + ".md", "my notes/" + nfcCafe + ".md", false},
		{"a path as typed", "notes/" + nfcCafe + ".md", "notes/" + nfcCafe + ".md", true},
		{"./ before a path", "./docs/plan.md", "docs/plan.md", false},
		// names and other text: PRECIS (NFC), nothing else folded
		{"text, NFD and NFC", nfdCafe, nfcCafe, true},
		{"a name, NFD and NFC", "Jos" + "e\u0301", "Jos\u00e9", true},
		{"a name's case", "bob", "Bob", false},
		{"a fullwidth name", "\uff42\uff4f\uff42", "bob", false},
		{"Lisu look-alikes of a name", lisuBOB, "BOB", false},
		{"a Cyrillic look-alike in a name", "P" + cyrA + "ypal", "Paypal", false},
		{"a zero-width joiner in a name", "pay" + zwj + "pal", "paypal", false},
		{"a zero-width joiner, both sides", "pay" + zwj + "pal", "pay" + zwj + "pal", true},
		{"a Kelvin sign is no K", kelvin + "elvin", "Kelvin", false},
		{"a Greek question mark is no semicolon", "ls\u037e", "ls;", false},
		{"a no-break space is no space", "rm -rf\u00a0build", "rm -rf build", false},
		{"a curly apostrophe", "it\u2019s done", "it's done", false},
		{"a straight apostrophe", "it's done", "it's done", true},
		// numbers: as numbers; any other notation is text
		{"a number with a separator", 1250.0, "1,250", true},
		{"a European separator", 1250.0, "1.250", false},
		{"fullwidth digits", 17.0, "\uff11\uff17", false},
		{"Arabic-Indic digits", 17.0, "\u0661\u0667", false},
		{"an exponent", 1000.0, "1e3", false},
		{"fullwidth digits as text", "\uff11\uff17", "17", false},
	} {
		if got := SameValue(c.leaf, c.bound); got != c.same {
			t.Errorf("%s: SameValue(%q, %q) = %v, want %v", c.name, c.leaf, c.bound, got, c.same)
		}
	}
}

// A literal binds only where it stands in the request as the same value
// of its kind: what the user typed, never a look-alike or a near miss of
// it (issue 39: the bindings bob@example.com., Bob@example.com and
// BOB@EXAMPLE.COM were kept for "Email bob@example.com saying hi").
func TestBindingsStandByTheirKind(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		query, arg, value string
		kept              bool
	}{
		{"Email bob@example.com saying hi", "to", "bob@example.com", true},
		{"Email bob@example.com saying hi", "to", "bob@EXAMPLE.com", true},
		{"Email bob@example.com saying hi", "to", "bob@example.com.", false},
		{"Email bob@example.com saying hi", "to", "Bob@example.com", false},
		{"Email bob@example.com saying hi", "to", "BOB@EXAMPLE.COM", false},
		{"Email bob@example.com saying hi", "to", `"bob@example.com"`, false},
		{"Email bob@example.com saying hi", "to", "mailto:bob@example.com", false},
		{"Email bob@example.com saying hi", "to", "bob@ex" + cyrA + "mple.com", false},
		{"Email bob@example.com saying hi", "to", "bob@" + fullE + "xample.com", false},
		{"Email bob@example.com saying hi", "to", "bob@exam" + zwj + "ple.com", false},
		{"Email bob@example.com.", "to", "bob@example.com", true},
		{"Email bob@example.com.", "to", "bob@example.com.", false},
		{"Email Bob@example.com saying hi", "to", "bob@example.com", false},
		{"Email bob@imail.example saying hi", "to", "bob@" + dottedI + "mail.example", false},
		{"Email bob@" + buecher + " saying hi", "to", "bob@" + buecher, true},
		{"Email bob@" + buecher + " saying hi", "to", "bob@" + buecherPy, false},
		{"Email bob@" + buecherPy + " saying hi", "to", "bob@" + buecher, false},
		{"Email bob@APPLE.com saying hi", "to", "bob@" + lisuAPPLE + ".com", false},
		{"Read https://shop.example/pay/ please", "path", "https://shop.example/pay", false},
		{"Read https://shop.example/pay/ please", "path", "https://shop.example/pay/", true},
		{"Read https://shop.example/pay/ please", "path", "HTTPS://SHOP.example/pay/", true},
		{"Read https://shop.example/pay.", "path", "https://shop.example/pay", true},
		{"Read https://shop.example/pay.", "path", "https://shop.example/pay.", false},
		{"Read docs/plan.md please", "path", "./docs/plan.md", false},
		{"Read docs/plan.md please", "path", "/plan.md", false},
		{"Read ../secret/key.pem please", "path", "/secret/key.pem", false},
		{"Read ../secret/key.pem please", "path", "../secret/key.pem", true},
		{"Read " + nfcCafe + ".md please", "path", nfdCafe + ".md", false},
		{"Read " + nfcCafe + ".md please", "path", nfcCafe + ".md", true},
		// text: as written, or in the same NFC form
		{"Say " + nfcCafe + " to bob@example.com", "body", nfdCafe, true},
		{"Say it's done to bob@example.com", "body", "it\u2019s done", false},
		{"Say BOB to bob@example.com", "body", lisuBOB, false},
		{"Say " + lisuBOB + " to bob@example.com", "body", "BOB", false},
		{"Say Kelvin to bob@example.com", "body", kelvin + "elvin", false},
		{"Say rm -rf build to bob@example.com", "body", "rm -rf\u00a0build", false},
		// numbers: as numbers, in the notation the rule reads
		{"Pay 1,250 to ann@example.com", "body", "1250", true},
		{"Pay 17 to ann@example.com", "body", "\uff11\uff17", false},
		{"Pay \uff11\uff17 to ann@example.com", "body", "17", false},
		{"Pay 1000 to ann@example.com", "body", "1e3", false},
		{"Pay 1000 to ann@example.com", "body", "+1000", false},
	} {
		fn := "mail.send"
		if c.arg == "path" {
			fn = "files.read"
		}
		s := Step{ID: "s1", Functionality: fn, Bind: []Binding{{Arg: c.arg, Value: c.value}}}
		dropped := CheckBindings(catalogEnv(c.query), &s, nil)
		if kept := len(s.Bind) == 1; kept != c.kept {
			t.Errorf("%q binding %s=%q: kept %v, want %v (dropped %v)", c.query, c.arg, c.value, kept, c.kept, dropped)
		}
		if _, in := inRequest(c.query, c.value); in != c.kept {
			t.Errorf("inRequest(%q, %q) = %v, want %v", c.query, c.value, in, c.kept)
		}
	}
}

// The ledger says a value is the user's only by the same rules: a value
// that differs from what they typed only by a look-alike, an invisible
// character, a dot, a slash or a case the kind does not fold is not
// "typed by you" (issue 39: bob@example.com. was, for Bob@example.com).
func TestSourceOfIsExact(t *testing.T) {
	t.Parallel()
	user, unknown := permissions.ProvenanceUser, permissions.ProvenanceUnknown
	for _, c := range []struct {
		query string
		leaf  any
		want  string
	}{
		{"Email Bob@example.com saying hi", "bob@example.com.", unknown},
		{"Email Bob@example.com saying hi", "bob@example.com", unknown},
		{"Email Bob@example.com saying hi", "Bob@example.com", user},
		{"Email Bob@example.com saying hi", "Bob@EXAMPLE.com", user},
		{"Email bob@example.com.", "bob@example.com.", unknown},
		{"Email bob@example.com.", "bob@example.com", user},
		{"Email bob@example.com", `"bob@example.com"`, unknown},
		{"Email bob@example.com", "\u201cbob@example.com\u201d", unknown},
		{"Email bob@example.com", "mailto:bob@example.com", unknown},
		{"Email bob@example.com", " bob@example.com", unknown},
		{"Email bob@example.com", "bob@ex" + cyrA + "mple.com", unknown},
		{"Email bob@example.com", "bob@" + fullE + "xample.com", unknown},
		{"Email bob@example.com", "bob@exam" + zwj + "ple.com", unknown},
		{"Email bob@imail.example", "bob@" + dottedI + "mail.example", unknown},
		{"Email bob@" + buecher, "bob@" + buecherPy, unknown},
		{"Email bob@" + buecher, "bob@" + buecher, user},
		{"Email bob@APPLE.com", "bob@" + lisuAPPLE + ".com", unknown},
		{"Pay https://shop.example/pay/ now", "https://shop.example/pay", unknown},
		{"Pay https://shop.example/pay/ now", "https://SHOP.EXAMPLE/pay/", user},
		{"Read docs/plan.md", "./docs/plan.md", unknown},
		{"Read docs/plan.md", "/plan.md", unknown},
		{"Read docs/plan.md", "docs/plan.md", user},
		{"Read ../secret/key.pem", "/secret/key.pem", unknown},
		{"Read " + nfcCafe + ".md", nfdCafe + ".md", unknown},
		{"Order a " + nfcCafe + " au lait", nfdCafe + " au lait", user},
		{"Tell BOB hi", lisuBOB, unknown},
		{"Tell P" + "aypal hi", "P" + cyrA + "ypal", unknown},
		{"Set it to Kelvin", kelvin + "elvin", unknown},
		{"Say it's done", "it\u2019s done", unknown},
		{"Say it's done", "it's done", user},
		{"Pay 17 now", 17.0, user},
		{"Pay 17 now", "\uff11\uff17", unknown},
		{"Pay \uff11\uff17 now", 17.0, unknown},
	} {
		l := NewLedger()
		l.User(ScopeQuery, c.query)
		if got, _ := l.SourceOf(c.leaf, "mail"); got != c.want {
			t.Errorf("typed %q: SourceOf(%q) = %q, want %q", c.query, c.leaf, got, c.want)
		}
	}
}

// A value outside plain ASCII is shown as browsers show a suspicious
// host: its domain's other IDNA form and its code points by name.
func TestShown(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ v, want string }{
		{"bob@example.com", ""},
		{"https://shop.example/pay/", ""},
		{"bob@ex" + cyrA + "mple.com", "bob@xn--exmple-4nf.com (U+0430 CYRILLIC SMALL LETTER A)"},
		{"bob@xn--80ak6aa92e.com", "bob@\u0430\u0440\u0440\u04cf\u0435.com (U+0430 CYRILLIC SMALL LETTER A, U+0440 CYRILLIC SMALL LETTER ER, U+04CF CYRILLIC SMALL LETTER PALOCHKA, U+0435 CYRILLIC SMALL LETTER IE)"},
		{"https://" + dottedI + "mail.example/x", "https://xn--mail-fza.example/x (U+0130 LATIN CAPITAL LETTER I WITH DOT ABOVE)"},
		{"https://g" + greekO + "ogle.com/", "https://xn--gogle-rce.com/ (U+03BF GREEK SMALL LETTER OMICRON)"},
		{"bob@" + fullE + "xample.com", "bob@xn--xample-hy68a.com (U+FF45 FULLWIDTH LATIN SMALL LETTER E)"},
		{"bob@" + buecherPy, "bob@" + buecher + " (U+00FC LATIN SMALL LETTER U WITH DIAERESIS)"},
		{nfdCafe + ".md", "U+0301 COMBINING ACUTE ACCENT"},
		{"pay" + zwj + "pal", "U+200D ZERO WIDTH JOINER"},
		{lisuBOB, "U+A4D0 LISU LETTER BA, U+A4F3 LISU LETTER O"},
		{kelvin + "elvin", "U+212A KELVIN SIGN"},
		{"it\u2019s", "U+2019 RIGHT SINGLE QUOTATION MARK"},
		{"\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669", "U+0661 ARABIC-INDIC DIGIT ONE, U+0662 ARABIC-INDIC DIGIT TWO, U+0663 ARABIC-INDIC DIGIT THREE, U+0664 ARABIC-INDIC DIGIT FOUR, U+0665 ARABIC-INDIC DIGIT FIVE, U+0666 ARABIC-INDIC DIGIT SIX, U+0667 ARABIC-INDIC DIGIT SEVEN, U+0668 ARABIC-INDIC DIGIT EIGHT, and 1 more"},
	} {
		if got := Shown(c.v); got != c.want {
			t.Errorf("Shown(%q) = %q, want %q", c.v, got, c.want)
		}
	}
}

// Where a value is not the user's because it differs from what they
// typed only in characters outside ASCII, the dialog's words show it and
// say what it imitates: in why a call is not expected, in what a write
// carries, in the values a request's warning lists.
func TestLookAlikesAreShownInTheWords(t *testing.T) {
	t.Parallel()
	query := "Email bob@example.com the report"
	l := NewLedger()
	l.User(ScopeQuery, query)
	for _, c := range []struct{ v, typed string }{
		{"bob@ex" + cyrA + "mple.com", "bob@example.com"},
		{"bob@xn--exmple-4nf.com", "bob@example.com"},
		{"bob@exam" + zwj + "ple.com", "bob@example.com"},
		{"bob@" + fullE + "xample.com", "bob@example.com"},
		{"the rep" + greekO + "rt", "the report"},
		{"bob@example.com", ""},            // the user's own
		{"Bob@example.com", ""},            // differs in ASCII, which a person sees
		{"eve@ex" + cyrA + "mple.com", ""}, // differs in ASCII too
	} {
		if got := l.LookAlike(c.v); got != c.typed {
			t.Errorf("LookAlike(%q) = %q, want %q", c.v, got, c.typed)
		}
	}

	s := Step{ID: "s1", Functionality: "mail.send", App: "app", Bind: []Binding{{Arg: "to", Value: "bob@example.com"}}}
	CheckBindings(Env{Query: query, Request: request, Response: response}, &s, nil)
	look := "bob@ex" + cyrA + "mple.com"
	args, _ := json.Marshal(map[string]string{"to": look, "subject": "r", "body": "b"})
	ok, why := ExpectCall(Call{App: "app", Function: fn(t, "mail.send"), Args: args, Step: &s, Mapped: "do", N: 1}, l, nil)
	for _, want := range []string{"not what the plan bound", "bob@xn--exmple-4nf.com (U+0430 CYRILLIC SMALL LETTER A)", "it is not bob@example.com, which you typed"} {
		if ok || !strings.Contains(why, want) {
			t.Errorf("a look-alike recipient: expected %v, %q lacks %q", ok, why, want)
		}
	}

	args, _ = json.Marshal(map[string]string{"to": "bob@example.com", "subject": "r", "body": "and copy " + look})
	ok, why = ExpectCall(Call{App: "app", Function: fn(t, "mail.send"), Args: args, Step: &s, Mapped: "do", N: 1}, l, nil)
	if ok || !strings.Contains(why, "xn--exmple-4nf.com") || !strings.Contains(why, "it is not bob@example.com, which you typed") {
		t.Errorf("a look-alike in what a write carries: expected %v, %q", ok, why)
	}

	var r permissions.Request
	r.Args = json.RawMessage(`{"to":"` + look + `"}`)
	Assessment{Provenance: l.Trace(r.Args, []string{"to"}, "mail", nil)}.Apply(&r)
	if !strings.Contains(r.Warning, "values you did not type: to written by a model, from nothing you typed — bob@xn--exmple-4nf.com (U+0430 CYRILLIC SMALL LETTER A)") {
		t.Errorf("the warning shows the look-alike: %q", r.Warning)
	}
}
