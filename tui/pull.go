package tui

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/progress"
	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// pullState is where the model-missing dialog stands.
type pullState int

const (
	pullAsk     pullState = iota // "pull it now? (y/n)"
	pullRunning                  // Ollama.Pull in flight
	pullFailed                   // the pull failed; esc closes
)

// pullDialog offers to pull a missing model, shows the pull's progress,
// and remembers the turn to retry once the model is there.
type pullDialog struct {
	model string
	chat  string // the turn to retry afterwards
	seq   uint64
	query string
	state pullState
	// setup marks a pull the setup panel offered at start (setup.go):
	// no turn waits for it; why names who uses the model.
	setup bool
	why   string
	// switchTo marks a pull /model NAME offered: once it is done the
	// session switches to the model.
	switchTo bool

	run  *pullRun
	last llm.Progress
	err  string
	bar  progress.Model
}

// pullRun is one Ollama.Pull in flight; the worker writes only q and err.
type pullRun struct {
	id  int
	q   *queue[llm.Progress]
	err error
}

// pullMsg hands progress to Update; done says the pull ended (err set).
type pullMsg struct {
	id       int
	progress []llm.Progress
	done     bool
}

func newPullDialog(model, chat string, seq uint64) *pullDialog {
	return &pullDialog{model: model, chat: chat, seq: seq, bar: progress.New(progress.WithDefaultBlend(), progress.WithFillCharacters('█', '░'), progress.WithoutPercentage())}
}

func (r *pullRun) work(o Ollama, model string) func(context.Context) {
	return func(ctx context.Context) {
		defer r.q.close()
		r.err = o.Pull(ctx, model, r.q.push)
	}
}

func (r *pullRun) wait() tea.Msg {
	ps, done := r.q.take()
	return pullMsg{id: r.id, progress: ps, done: done}
}

// percent is the share of the current layer pulled, 0 when unknown.
func (p *pullDialog) percent() float64 {
	if p.last.Total <= 0 {
		return 0
	}
	return min(float64(p.last.Completed)/float64(p.last.Total), 1)
}

func (p *pullDialog) view(th style.Theme, width, height int, canPull bool) string {
	inner := max(widget.DialogWidth(width)-4, 1)
	lines := []string{th.BoxTitle.Render("Model missing"), ""}
	switch p.state {
	case pullAsk:
		lines = append(lines, fmt.Sprintf("model %s is not installed — pull it now? (y/n)", th.Key.Render(widget.OneLine(p.model))))
		switch {
		case p.switchTo:
			lines = append(lines, th.Dim.Render("then this session switches to it; n keeps the models it has"))
		case p.why != "":
			lines = append(lines, th.Dim.Render("it is the model of "+p.why+"; n lists the installed models to choose from instead"))
		}
		if !canPull {
			lines[len(lines)-1] = fmt.Sprintf("model %s is not installed. Run `ollama pull %s`, then ctrl+r retries. esc closes.", widget.OneLine(p.model), widget.OneLine(p.model))
		}
	case pullRunning:
		status := p.last.Status
		if status == "" {
			status = "starting"
		}
		p.bar.SetWidth(inner)
		after := "the turn is retried when it is done"
		switch {
		case p.setup:
			after = "the chat opens when it is done"
		case p.switchTo:
			after = "this session switches to it when it is done"
		}
		lines = append(lines,
			fmt.Sprintf("pulling %s: %s", widget.OneLine(p.model), widget.OneLine(status)),
			p.bar.ViewAs(p.percent()),
			fmt.Sprintf("%s / %s", size(p.last.Completed), size(p.last.Total)),
			"",
			th.Dim.Render("esc cancels the pull; "+after))
	case pullFailed:
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
