package hub

import "testing"

// The triage's question names every functionality but chat, grouped by
// the name's first part, and the facts the hub holds by name — never a
// description, never a value.
func TestTriageQuestion(t *testing.T) {
	fns := []Functionality{{Name: "files.read", Description: "Read a file"}, {Name: ChatFunctionality}, {Name: "calc.evaluate"}, {Name: "files.write"}, {Name: "solo"}}
	got := triageQuestion(fns, []string{"trip.dates"})
	want := `Say only whether the last request needs one of these functionalities (files: read, write; calc: evaluate; solo) or one of these facts the assistant holds (trip.dates): {"kind":"apps"} if it does, else {"kind":"chat"}.`
	if got != want {
		t.Fatalf("question\n%s\nwant\n%s", got, want)
	}
	if got := triageQuestion(fns, nil); got != `Say only whether the last request needs one of these functionalities (files: read, write; calc: evaluate; solo): {"kind":"apps"} if it does, else {"kind":"chat"}.` {
		t.Fatalf("without facts: %s", got)
	}
}
