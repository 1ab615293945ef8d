package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
)

// slowPull is an Ollama whose pull reports half its progress, then waits
// to be cancelled.
type slowPull struct{ started chan struct{} }

func (slowPull) Version(context.Context) (string, error) { return "0.0.1-slow", nil }

func (slowPull) HasModel(context.Context, string) (bool, error) { return false, nil }

func (slowPull) Capabilities(context.Context, string) ([]string, error) { return nil, nil }

func (slowPull) ModelsThatCan(context.Context, string) ([]string, error) { return nil, nil }

func (s slowPull) Pull(ctx context.Context, model string, fn func(llm.Progress)) error {
	fn(llm.Progress{Status: "pulling manifest"})
	fn(llm.Progress{Status: "pulling 8eeb52dfb3bb", Completed: 512 << 20, Total: 1 << 30})
	close(s.started)
	<-ctx.Done()
	return ctx.Err()
}

func TestPullShowsProgressAndEscCancelsIt(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")), hubModel)
	opts := r.options()
	sp := slowPull{started: make(chan struct{})}
	opts.Ollama = sp
	d := newDriver(t, opts, 80, 24)
	d.ask("hello?")
	d.arm() // the dialog opened by itself: it answers once armed (overlay.go)
	d.key(char('y'))
	d.until("512.0 MiB / 1.0 GiB")
	v := d.view()
	if !strings.Contains(v, "pulling spoke-model: pulling 8eeb52dfb3bb") || !strings.Contains(v, "█") || !strings.Contains(v, "░") {
		t.Fatalf("no progress bar at half way:\n%s", v)
	}
	// The bar is half full.
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, "█") {
			full, empty := strings.Count(l, "█"), strings.Count(l, "░")
			if full == 0 || empty == 0 || full-empty > 1 || empty-full > 1 {
				t.Fatalf("bar %q is not half full", l)
			}
		}
	}
	d.key(keyEsc)
	d.idle()
	v = d.view()
	if strings.Contains(v, "Model missing") || !strings.Contains(v, "pull cancelled") {
		t.Fatalf("esc must cancel the pull and close the dialog:\n%s", v)
	}
	if n := r.spokeRequests(); n != 1 {
		t.Fatalf("a cancelled pull must not retry the turn (%d spoke requests)", n)
	}
}

// The offer preselects Pull: enter at once pulls the model.
func TestPullIsPreselected(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")), hubModel)
	opts := r.options()
	sp := slowPull{started: make(chan struct{})}
	opts.Ollama = sp
	d := newDriver(t, opts, 80, 24)
	d.ask("hello?")
	if v := d.view(); !strings.Contains(v, "pull it now?  Pull     Not now") {
		t.Fatalf("the dialog must offer the pull:\n%s", v)
	}
	d.arm()
	d.key(keyEnter)
	d.until("512.0 MiB / 1.0 GiB")
	d.key(keyEsc)
	d.idle()
}

func TestPullWithoutOllamaExplains(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")), hubModel)
	opts := r.options()
	opts.Ollama = nil
	d := newDriver(t, opts, 80, 24)
	d.ask("hello?")
	d.arm()
	d.key(char('y'))
	if v := d.view(); !strings.Contains(v, "Run `ollama pull spoke-model`") {
		t.Fatalf("without an Ollama client the dialog must say how to pull:\n%s", v)
	}
	d.key(keyEsc)
	if v := d.view(); strings.Contains(v, "Model missing") {
		t.Fatalf("esc must close the dialog:\n%s", v)
	}
}

func TestThemes(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")))
	for _, tc := range []struct {
		theme string
		bg    string // the terminal's answer to the background query
		dark  bool
	}{
		{"dark", "#ffffff", true},
		{"light", "#000000", false},
		{"auto", "#ffffff", false},
		{"auto", "#101010", true},
		{"", "#fafafa", false},
	} {
		opts := r.options()
		opts.Theme = tc.theme
		d := newDriver(t, opts, 80, 24)
		d.send(bgMsg(tc.bg))
		if got := d.model().th.Dark; got != tc.dark {
			t.Errorf("theme %q on %s: dark = %v, want %v", tc.theme, tc.bg, got, tc.dark)
		}
	}
}

func bgMsg(hex string) tea.Msg { return tea.BackgroundColorMsg{Color: lipgloss.Color(hex)} }
