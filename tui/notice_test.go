package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// TestNoticesWrapAndFade: a notice wider than the terminal wraps over
// lines the conversation gives up (every word of it on screen, the
// screen still its height), and it fades: the fade set for it clears it,
// a fade set for an earlier notice does not.
func TestNoticesWrapAndFade(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("ok")))
	const w, h = 34, 16
	d := newDriver(t, r.options(), w, h)
	convBefore := d.model().convHeight()
	d.key(tea.KeyPressMsg{Code: tea.KeyF2})
	m := d.model()
	if m.notice == "" || len(m.notice) < 2*w {
		t.Fatalf("f2 should set a notice longer than two lines: %q", m.notice)
	}
	v := d.view()
	lines := strings.Split(v, "\n")
	if len(lines) != h {
		t.Fatalf("the screen must stay %d lines, got %d:\n%s", h, len(lines), v)
	}
	flat := strings.Join(strings.Fields(v), " ")
	for _, word := range strings.Fields(m.notice) {
		if !strings.Contains(flat, word) {
			t.Errorf("the notice lost %q to the width:\n%s", word, v)
		}
	}
	if got := m.convHeight(); got != convBefore-(m.ruleRows()-1) || m.ruleRows() < 2 {
		t.Errorf("the conversation must give up the notice's extra lines: %d → %d (%d rows)", convBefore, got, m.ruleRows())
	}
	first := m.noticeSeq

	d.key(tea.KeyPressMsg{Code: tea.KeyF2}) // another notice
	d.send(noticeFadeMsg{seq: first})
	if d.model().notice == "" {
		t.Fatal("the fade of an earlier notice cleared the current one")
	}
	d.send(noticeFadeMsg{seq: d.model().noticeSeq})
	if m := d.model(); m.notice != "" || m.convHeight() != convBefore {
		t.Fatalf("the notice must fade and give its lines back: %q, conversation %d", m.notice, m.convHeight())
	}
	if v := d.view(); strings.Contains(v, "mouse") {
		t.Fatalf("a faded notice is gone from the screen:\n%s", v)
	}
}

// A notice longer than noticeRows lines is cut on its last line with "…".
func TestNoticeTooLongIsCut(t *testing.T) {
	m := Model{width: 30, notice: strings.Repeat("word ", 40)}
	lines := m.noticeLines()
	if len(lines) != noticeRows || !strings.HasSuffix(lines[noticeRows-1], "…") {
		t.Fatalf("want %d lines, the last cut with …: %q", noticeRows, lines)
	}
	if noticeTTL(m.notice) <= noticeTTL("short") {
		t.Error("a longer notice must stay longer")
	}
}
