package tui

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/tui/dialogs/pull"
)

// The root's side of the model-missing dialog (tui/dialogs/pull): the
// pull runs on a worker, its progress comes through a queue, and when it
// ends the turn is retried, the setup panel checks again, or /model
// switches.

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

// openPull shows the model-missing dialog for model, pulled for f (under
// a permission dialog when one shows: its confirmation then waits for y
// or n, one form at a time).
func (m *Model) openPull(model string, f pull.For) tea.Cmd {
	var cmd tea.Cmd
	m.pull, cmd = pull.New(m.th, model, f, m.width, m.opts.Ollama != nil)
	m.show(overlayPull)
	if m.perm != nil {
		return m.pull.Leave()
	}
	return tea.Batch(m.leaveScreens(), cmd)
}

// pullKey drives the model-missing dialog: a key, or its confirmation's
// messages.
func (m *Model) pullKey(msg tea.Msg) tea.Cmd {
	p := m.pull
	if p == nil {
		m.overlay = overlayNone
		return nil
	}
	cmd, out := p.Update(msg)
	switch out {
	case pull.Start:
		if m.opts.Ollama == nil {
			return cmd
		}
		m.nextID++
		r := &pullRun{id: m.nextID, q: newQueue[llm.Progress]()}
		m.pulling = r
		p.Started(r.id)
		ctx := m.w.add(r.id)
		return tea.Batch(cmd, m.w.start(ctx, r.id, r.work(m.opts.Ollama, p.Model), r.wait), m.tick())
	case pull.Decline:
		m.closePull("")
		if p.Setup {
			return tea.Batch(cmd, m.setupPullEnded(p.Model, errDeclined))
		}
	case pull.Cancel:
		if m.pulling != nil {
			m.w.cancel(m.pulling.id)
		}
	case pull.Close:
		m.closePull("")
	}
	return cmd
}

func (m *Model) closePull(notice string) {
	m.pull = nil
	m.hide(overlayPull)
	m.notice = notice
}

// onPull follows a pull; when it succeeds the turn is retried.
func (m *Model) onPull(msg pullMsg) tea.Cmd {
	r, p := m.pulling, m.pull
	if r == nil || r.id != msg.id {
		return nil
	}
	if n := len(msg.progress); n > 0 && p != nil {
		p.Progress(msg.progress[n-1])
	}
	if !msg.done {
		return r.wait
	}
	m.pulling = nil
	if p == nil {
		return nil
	}
	if p.Setup {
		m.closePull("")
		return m.setupPullEnded(p.Model, r.err)
	}
	if p.Switch && r.err == nil {
		m.closePull("pulled " + p.Model)
		return m.switchModel(p.Model)
	}
	switch err := r.err; {
	case errors.Is(err, context.Canceled):
		m.closePull("pull cancelled — ctrl+r retries the turn once the model is there")
		return nil
	case err != nil:
		p.Failed(err)
		return nil
	}
	m.closePull("pulled " + p.Model)
	if m.run != nil {
		return nil
	}
	cmd := m.retryTurn(p.Chat, p.Seq, p.Query)
	m.notice = "pulled " + p.Model + " — retrying the turn"
	return cmd
}
