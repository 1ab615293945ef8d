package headless

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
)

// TermSize is the terminal standard output is, for a streamed text
// answer (Options.Terminal); zero when it is not a terminal.
type TermSize struct{ Cols, Rows int }

// previewRows is how many rows a draft may fill on a terminal before its
// plan says whether it is the answer; what comes past them waits for the
// plan. A plan of plain chat is a few tokens: the rows are seldom full.
const previewRows = 6

// preview is a draft shown on a terminal before its plan: in rows
// reserved below the cursor (written as newlines, then gone back up, so
// the terminal scrolls before the draft starts and never while it is
// shown), whose start is saved (DECSC). A withdrawn draft is taken back
// by restoring the cursor there and erasing to the screen's end (DECRC,
// ED): whatever the draft's width on the screen, nothing above it is
// touched. The printer estimates the rows a piece fills from its
// sanitized text, every rune past ASCII counted two columns wide, a tab
// to the next stop — never fewer rows than the terminal uses — and holds
// back a piece that would fill more than it reserved.
type preview struct {
	rows     int // rows reserved; 0: nothing shown
	row, col int // the estimated cursor, from the saved start
	held     strings.Builder
}

// Control sequences of the printer's own: they never come from an
// answer's text, which is sanitized (internal/termtext).
const (
	saveCursor    = "\x1b7"
	restoreCursor = "\x1b8"
	eraseBelow    = "\x1b[J"
)

// previewing: a draft is shown on a terminal, its plan not yet come.
func (p *printer) previewing() bool { return p.prev.rows > 0 }

// showDraft shows a draft's piece on the terminal, in the rows reserved
// for it, or holds it back past them.
func (p *printer) showDraft(text string) {
	t := p.opts.Terminal
	if p.prev.rows == 0 {
		n := min(previewRows, t.Rows-1)
		if n < 1 || t.Cols < 1 {
			p.draft.WriteString(text)
			return
		}
		p.prev = preview{rows: n}
		p.raw(strings.Repeat("\n", n) + fmt.Sprintf("\x1b[%dA", n) + saveCursor)
	}
	if p.prev.held.Len() > 0 {
		p.prev.held.WriteString(text)
		return
	}
	row, col := p.prev.advance(termtext.Sanitize(text), t.Cols)
	if row >= p.prev.rows {
		p.prev.held.WriteString(text)
		return
	}
	p.prev.row, p.prev.col = row, col
	p.streamed = true
	p.parts().Write(hub.ByAssistant, "", text)
}

// advance is where the cursor would be after s, at most.
func (v *preview) advance(s string, cols int) (row, col int) {
	row, col = v.row, v.col
	for _, r := range s {
		w := 2
		switch {
		case r == '\n':
			row, col = row+1, 0
			continue
		case r == '\t':
			w = 8 - col%8
		case r < utf8.RuneSelf:
			w = 1
		}
		if col+w > cols {
			row, col = row+1, 0
		}
		col += w
	}
	return row, col
}

// keepPreview: the plan kept the draft; what was held back follows what
// is shown.
func (p *printer) keepPreview() {
	held := p.prev.held.String()
	p.prev = preview{}
	if held != "" {
		p.parts().Write(hub.ByAssistant, "", held)
	}
}

// takeBack erases a shown draft: the cursor back at its start, the
// screen below it cleared, the answer's writer started afresh.
func (p *printer) takeBack() {
	if !p.previewing() {
		return
	}
	p.prev = preview{}
	p.out.Discard()
	p.pw = nil
	p.streamed = false
	p.raw(restoreCursor + eraseBelow)
}

// raw writes the printer's own control sequences to the terminal.
func (p *printer) raw(s string) {
	p.write(p.rawOut, s)
}
