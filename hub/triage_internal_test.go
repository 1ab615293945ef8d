package hub

import "testing"

// The triage's question names every app of the catalog (a functionality
// name up to its first dot) once, chat apart, and the facts the hub holds
// by name — never a description, never a value.
func TestTriageQuestion(t *testing.T) {
	fns := []Functionality{{Name: "files.read", Description: "Read a file"}, {Name: ChatFunctionality}, {Name: "calc.evaluate"}, {Name: "files.write"}, {Name: "solo"}}
	got := triageQuestion(fns, []string{"trip.dates"})
	want := `Does the last request need an app (files, calc, solo) or a fact the assistant holds (trip.dates)? Answer "apps" if so, else "chat".`
	if got != want {
		t.Fatalf("question\n%s\nwant\n%s", got, want)
	}
	if got := triageQuestion(fns, nil); got != `Does the last request need an app (files, calc, solo)? Answer "apps" if so, else "chat".` {
		t.Fatalf("without facts: %s", got)
	}
}

// The triage's reply is read as the JSON string its format asks for and
// nothing else: a kind in other quote marks, other letters, with more
// around it, or cut short is no kind (the planner decides).
func TestTriageKind(t *testing.T) {
	for reply, want := range map[string]string{
		`"chat"`:          kindChat,
		" \"apps\"\n":     kindApps,
		`"\u0063hat"`:     kindChat, // the same string, escaped
		`“chat”`:          "",
		`'chat'`:          "",
		`«chat»`:          "",
		`chat`:            "",
		`"Chat"`:          "",
		`"chat."`:         "",
		`"chat" "apps"`:   "",
		`{"kind":"chat"}`: "",
		`["chat"]`:        "",
		`"cha`:            "",
		``:                "",
		`"ｃｈａｔ"`:          "",
		"\"chat\u200b\"":  "",
		`"chat"` + "\x00": "",
	} {
		if got := triageKind(reply); got != want {
			t.Errorf("triageKind(%q) = %q, want %q", reply, got, want)
		}
	}
}
