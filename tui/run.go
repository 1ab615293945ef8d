package tui

import (
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"
)

// shutdownWait is how long Run waits, after the program ends, for the
// running turn to notice its cancellation and for the hub to log it.
const shutdownWait = 5 * time.Second

// Run shows the UI on the terminal (alternate screen, mouse wheel) until
// the user quits, then cancels any running turn or pull, waits for it to
// end, and returns with the terminal restored. A quit (ctrl+c, SIGINT,
// SIGTERM) returns nil; a cancelled ctx returns ctx's error.
func Run(ctx context.Context, opts Options) error {
	if opts.Backend == nil {
		return errors.New("tui: no backend")
	}
	m := newModel(ctx, opts)
	p := tea.NewProgram(m, tea.WithContext(ctx))
	_, err := p.Run()
	m.w.shutdown(shutdownWait)
	switch {
	case err == nil, errors.Is(err, tea.ErrInterrupted):
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return err
}
