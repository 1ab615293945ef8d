// Package pull is the model-missing dialog: it offers to pull a model
// that is not installed (y/n), shows the pull's progress (a bubbles
// progress bar) and why it ended, and remembers what the pull is for — a
// turn to retry, the setup panel's model, a /model switch. The pull
// itself runs on the root's worker; the dialog's Update says what the
// user asked (start, decline, cancel, close), the root tells it how the
// pull goes.
package pull

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/progress"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/tui/forms"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// state is where the dialog stands.
type state int

const (
	asking  state = iota // "pull it now? (y/n)"
	running              // the pull is in flight
	failed               // the pull failed; esc closes
)

// For is what a pull is for once it is done.
type For struct {
	// Chat, Seq and Query are the turn to retry afterwards.
	Chat  string
	Seq   uint64
	Query string
	// Setup marks a pull the setup panel offered at start: no turn
	// waits for it; Why names who uses the model.
	Setup bool
	Why   string
	// Switch marks a pull /model NAME offered: once it is done the hub
	// and the spokes switch to the model, as /model NAME does.
	Switch bool
}

// Dialog is the model-missing dialog.
type Dialog struct {
	Model string // the model to pull
	For
	ask   forms.Confirmation // "pull it now?", while it asks
	state state
	run   int // the worker's id of the pull in flight
	last  llm.Progress
	err   string
	bar   progress.Model
	// armed: its answers take keys. The root decides (its gate,
	// tui/overlay.go): a dialog that opened by itself — a turn's missing
	// model, the setup panel's — stays unarmed while the person types,
	// its buttons dimmed.
	armed bool
}

// Outcome is what the user asked of the root.
type Outcome int

const (
	None    Outcome = iota
	Start           // y: pull it (the root starts the worker, then Started)
	Decline         // n or esc before a pull: close, nothing pulled
	Cancel          // esc while it pulls: cancel the worker
	Close           // esc or enter after a failure
)

// New opens the dialog for model, pulled for f, in a terminal width
// cells wide; canPull is false where the UI has no Ollama to pull with
// (the dialog then says how to pull by hand, and asks nothing). The Cmd
// starts its confirmation.
func New(th style.Theme, model string, f For, width int, canPull bool) (*Dialog, tea.Cmd) {
	p := &Dialog{Model: model, For: f, bar: progress.New(progress.WithDefaultBlend(), progress.WithFillCharacters('█', '░'), progress.WithoutPercentage())}
	if !canPull {
		return p, nil
	}
	// Pull is preselected: the user asked for what needs the model, and
	// enter gets it; n or esc still declines.
	return p, p.ask.Offer(th, "pull it now?", "Pull", "Not now", widget.DialogWidth(width)-4)
}

// SetArmed says whether the dialog's answers take keys (the root's
// gate decides); unarmed, it answers no key and draws its buttons dimmed.
func (p *Dialog) SetArmed(armed bool) { p.armed = armed }

// Armed reports whether the dialog's answers take keys.
func (p *Dialog) Armed() bool { return p.armed }

// Update takes a key, or the confirmation's own messages, and says what
// the user asked. Unarmed, it takes no key.
func (p *Dialog) Update(msg tea.Msg) (tea.Cmd, Outcome) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		if !p.armed {
			return nil, None
		}
		return p.key(k)
	}
	if !p.ask.Open() {
		return nil, None
	}
	return p.confirm(msg)
}

// Leave ends the confirmation as esc would leave it, without an answer:
// another form takes the keys (y and n still answer without it).
func (p *Dialog) Leave() tea.Cmd {
	p.ask.Close()
	return nil
}

// confirm gives msg to the confirmation: Start or Decline once it ends.
func (p *Dialog) confirm(msg tea.Msg) (tea.Cmd, Outcome) {
	cmd, done, yes := p.ask.Update(msg)
	switch {
	case !done:
		return cmd, None
	case yes:
		return cmd, Start
	}
	return cmd, Decline
}

// key says what a key asks: while the dialog asks, its confirmation
// takes it (y pulls, n or esc declines, ←/→ and enter choose).
func (p *Dialog) key(msg tea.KeyPressMsg) (tea.Cmd, Outcome) {
	s := msg.String()
	switch p.state {
	case asking:
		if p.ask.Open() {
			return p.confirm(msg)
		}
		switch s {
		case "y", "Y":
			return nil, Start
		case "n", "N", "esc":
			return nil, Decline
		}
	case running:
		if s == "esc" {
			return nil, Cancel
		}
	case failed:
		if s == "esc" || s == "enter" {
			return nil, Close
		}
	}
	return nil, None
}

// Started records the pull the root started, by its worker's id.
func (p *Dialog) Started(id int) {
	p.state, p.run = running, id
	p.ask.Close()
}

// Progress records how the pull goes.
func (p *Dialog) Progress(pr llm.Progress) { p.last = pr }

// Failed shows why the pull failed; esc closes.
func (p *Dialog) Failed(err error) { p.state, p.err = failed, err.Error() }

// percent is the share of the current layer pulled, 0 when unknown.
func (p *Dialog) percent() float64 {
	if p.last.Total <= 0 {
		return 0
	}
	return min(float64(p.last.Completed)/float64(p.last.Total), 1)
}

// View draws the dialog; canPull is false where the UI has no Ollama to
// pull with (the dialog then says how to pull by hand).
func (p *Dialog) View(th style.Theme, width, height int, canPull bool) string {
	inner := max(widget.DialogWidth(width)-4, 1)
	lines := []string{th.BoxTitle.Render("Model missing"), ""}
	switch p.state {
	case asking:
		if !canPull {
			lines = append(lines, fmt.Sprintf("model %s is not installed. Run `ollama pull %s`, then ctrl+r retries. esc closes.", widget.OneLine(p.Model), widget.OneLine(p.Model)))
			break
		}
		lines = append(lines, fmt.Sprintf("model %s is not installed.", th.Key.Render(widget.OneLine(p.Model))))
		switch {
		case !p.armed:
			// Not yet answering: the buttons dimmed, and where the keys go.
			q := "pull it now? (y/n)"
			if p.ask.Open() {
				q = ansi.Strip(strings.TrimRight(p.ask.View(), "\n"))
			}
			lines = append(lines, th.Dim.Render(q), th.Dim.Render(fmt.Sprintf("typing goes to your message · answers once you stop typing for %.1fs", widget.ArmDelay.Seconds())))
		case p.ask.Open():
			lines = append(lines, strings.TrimRight(p.ask.View(), "\n"))
		default:
			lines = append(lines, "pull it now? (y/n)")
		}
		switch {
		case p.Switch:
			lines = append(lines, th.Dim.Render("then the hub and the spokes switch to it, as /model NAME does; n keeps the models they have"))
		case p.Why != "":
			lines = append(lines, th.Dim.Render("it is the model of "+p.Why+"; n lists the installed models to choose from instead"))
		}
	case running:
		status := p.last.Status
		if status == "" {
			status = "starting"
		}
		p.bar.SetWidth(inner)
		after := "the turn is retried when it is done"
		switch {
		case p.Setup:
			after = "the chat opens when it is done"
		case p.Switch:
			after = "the hub and the spokes switch to it when it is done"
		}
		lines = append(lines,
			fmt.Sprintf("pulling %s: %s", widget.OneLine(p.Model), widget.OneLine(status)),
			p.bar.ViewAs(p.percent()),
			fmt.Sprintf("%s / %s", size(p.last.Completed), size(p.last.Total)),
			"",
			th.Dim.Render("esc cancels the pull; "+after))
	case failed:
		lines = append(lines, th.Err.Render("✗ pull failed: ")+widget.OneLine(p.err), "", th.Dim.Render("esc closes"))
	}
	return widget.Box(th, lines, widget.DialogWidth(width), height)
}

// size prints a byte count for people.
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
