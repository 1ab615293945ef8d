package permission

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	perm "github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/style"
)

var at = time.Date(2025, 3, 14, 9, 15, 0, 0, time.UTC)

// Constraints are proposed from short string arguments; a path-like one
// offers its folder first.
func TestArgChoices(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args string
		want []string
	}{
		{`{"to":"bob@example.com","subject":"hi"}`, []string{"any arguments", "only this subject: subject=hi", "only to this recipient: to=bob@example.com"}},
		{`{"path":"/home/ada/notes/a.md"}`, []string{"any arguments", "only under this folder: path=/home/ada/notes/", "only this path: path=/home/ada/notes/a.md"}},
		{`{"path":"/etc"}`, []string{"any arguments", "only under this folder: path=/", "only this path: path=/etc"}},
		{`{"file":"todo.txt","dir":"docs/"}`, []string{"any arguments", "only under this folder: dir=docs/", "only this file: file=todo.txt"}},
		{`{"url":"https://example.com/a/b"}`, []string{"any arguments", "only this url: url=https://example.com/a/b"}},
		{`{"n":3,"o":{"a":"b"},"body":"line one\nline two","e":""}`, []string{"any arguments"}},
		{`not json`, []string{"any arguments"}},
	} {
		var got []string
		for _, a := range argChoices(json.RawMessage(c.args)) {
			got = append(got, a.label())
		}
		if strings.Join(got, " | ") != strings.Join(c.want, " | ") {
			t.Errorf("%s:\n got %q\nwant %q", c.args, got, c.want)
		}
	}
	// Each proposal holds for the request it came from.
	args := json.RawMessage(`{"to":"bob@example.com","path":"docs/drafts/q3.txt"}`)
	step := newCaveatStep(perm.AnswerSession, perm.Request{Args: args}, style.New(true))
	for i := range step.args {
		step.choice[rowArgs] = i
		if cv := step.caveats(at); !cv.Hold(args, at) {
			t.Errorf("%s does not hold for its own request", step.args[i].label())
		}
	}
}

// Free text with a slash is offered as an exact value, never cut at its
// slash into a folder; a path is offered its folder.
func TestFreeTextIsNoFolder(t *testing.T) {
	t.Parallel()
	for _, a := range argChoices(json.RawMessage(`{"body":"my results and/or the diagnosis","path":"docs/q3.txt"}`)) {
		if a.folder && a.name == "body" {
			t.Fatalf("free text offered as a folder: %+v", a)
		}
	}
	if as := argChoices(json.RawMessage(`{"path":"docs/q3.txt"}`)); len(as) != 3 || !as[1].folder || as[1].value != "docs/" {
		t.Fatalf("a path's folder: %+v", as)
	}
}
