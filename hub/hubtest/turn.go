package hubtest

import (
	"context"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/hub"
)

// Asker runs a turn (a hub.Operator, an engine's hub, a client of the
// serving process).
type Asker interface {
	Ask(ctx context.Context, chat, query string, emit func(hub.Event)) (hub.Turn, error)
}

// Streaming starts a turn of chat in the background and returns once its
// answer streams: the turn is running. cancel ends it; done is closed
// when it has returned.
func Streaming(t testing.TB, a Asker, chat, query string) (cancel context.CancelFunc, done <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{}, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		_, _ = a.Ask(ctx, chat, query, func(e hub.Event) {
			if e.Kind == hub.EventToken {
				select {
				case started <- struct{}{}:
				default:
				}
			}
		})
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("the turn never streamed")
	}
	return cancel, finished
}
