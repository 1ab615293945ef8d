package forms

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// A confirmation always shows its buttons, however long its question, at
// the widths the panes give it.
func TestConfirmationKeepsItsButtons(t *testing.T) {
	th := style.New(true)
	for _, w := range []int{30, 50, 66, 78, 118} {
		yes := false
		f := New(th, w, Confirm("delete “"+strings.Repeat("a very long chat title ", 6)+"”?", "Delete", "Keep", w, &yes))
		f.Init()
		v := ansi.Strip(f.View())
		if !strings.Contains(v, "Delete") || !strings.Contains(v, "Keep") || ansi.StringWidth(strings.TrimRight(v, " ")) > w {
			t.Errorf("width %d: %q", w, v)
		}
	}
}

// A confirmation ends with the answer its keys gave: y or enter on the
// yes word is a yes; n, esc, or enter on the no word a no; until then it
// is open and says nothing.
func TestConfirmationAnswers(t *testing.T) {
	th := style.New(true)
	for _, tc := range []struct {
		keys []tea.KeyPressMsg
		yes  bool
	}{
		{[]tea.KeyPressMsg{{Code: 'y', Text: "y"}}, true},
		{[]tea.KeyPressMsg{{Code: 'n', Text: "n"}}, false},
		{[]tea.KeyPressMsg{{Code: tea.KeyEscape}}, false},
		{[]tea.KeyPressMsg{{Code: tea.KeyEnter}}, false}, // the no word is chosen first
		{[]tea.KeyPressMsg{{Code: tea.KeyLeft}, {Code: tea.KeyEnter}}, true},
	} {
		var c Confirmation
		pump(&c, c.Ask(th, "revoke it?", "Revoke", "Keep", 60))
		if !c.Open() || !strings.Contains(ansi.Strip(c.View()), "revoke it?") {
			t.Fatalf("the question must show: %q", c.View())
		}
		var done, yes bool
		for _, k := range tc.keys {
			var cmd tea.Cmd
			cmd, done, yes = c.Update(k)
			if !done {
				done, yes = pump(&c, cmd)
			}
		}
		if !done || yes != tc.yes || c.Open() || c.View() != "" {
			t.Errorf("%v: done %v, yes %v (want %v), still open %v", tc.keys, done, yes, tc.yes, c.Open())
		}
	}
}

// An offer preselects its yes word: enter at once is a yes, a move to the
// no word and enter a no, and n and esc still decline.
func TestOfferPreselectsYes(t *testing.T) {
	th := style.New(true)
	for _, tc := range []struct {
		keys []tea.KeyPressMsg
		yes  bool
	}{
		{[]tea.KeyPressMsg{{Code: tea.KeyEnter}}, true},
		{[]tea.KeyPressMsg{{Code: tea.KeyRight}, {Code: tea.KeyEnter}}, false},
		{[]tea.KeyPressMsg{{Code: 'n', Text: "n"}}, false},
		{[]tea.KeyPressMsg{{Code: tea.KeyEscape}}, false},
	} {
		var c Confirmation
		pump(&c, c.Offer(th, "pull it now?", "Pull", "Not now", 60))
		var done, yes bool
		for _, k := range tc.keys {
			var cmd tea.Cmd
			cmd, done, yes = c.Update(k)
			if !done {
				done, yes = pump(&c, cmd)
			}
		}
		if !done || yes != tc.yes {
			t.Errorf("%v: done %v, yes %v (want %v)", tc.keys, done, yes, tc.yes)
		}
	}
	// Drawn: the yes word in the selection's colours, the no word dim.
	var offer, ask Confirmation
	offer.Offer(th, "pull it now?", "Pull", "Not now", 60)
	ask.Ask(th, "pull it now?", "Pull", "Not now", 60)
	sel := th.Selected.Padding(0, 2).Render("Pull")
	if !strings.Contains(offer.View(), sel) || strings.Contains(ask.View(), sel) {
		t.Errorf("the offer must draw Pull selected, the ask must not:\noffer %q\nask   %q", offer.View(), ask.View())
	}
}

// pump runs cmd and hands what it says back to c, as the program would,
// until c ends or nothing more comes.
func pump(c *Confirmation, cmd tea.Cmd) (done, yes bool) {
	for i := 0; cmd != nil && i < 20; i++ {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			cmd = nil
			for _, x := range b {
				if x != nil {
					if done, yes = pump(c, x); done {
						return done, yes
					}
				}
			}
			return false, false
		}
		cmd, done, yes = c.Update(msg)
		if done {
			return done, yes
		}
	}
	return false, false
}
