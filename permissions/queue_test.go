package permissions_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

type result struct {
	d   permissions.Decision
	err error
}

// start runs b.Request(ctx, r) in a goroutine the test waits for.
func start(t *testing.T, ctx context.Context, b *permissions.Broker, r permissions.Request) <-chan result {
	t.Helper()
	out := make(chan result, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d, err := b.Request(ctx, r)
		out <- result{d, err}
	}()
	t.Cleanup(wg.Wait)
	return out
}

func TestQueueOneAtATime(t *testing.T) {
	t.Parallel()
	p := &permissionstest.Prompter{Answer: permissions.AnswerOnce, Gate: make(chan struct{}), Started: make(chan permissions.Request)}
	b, err := permissions.NewBroker(permissions.Options{Prompter: p})
	if err != nil {
		t.Fatal(err)
	}
	var outs []<-chan result
	for range 3 {
		outs = append(outs, start(t, t.Context(), b, execNotes))
	}
	waitFor(t, "three pending", func() bool { return b.Pending() == 3 })
	for left := 3; left > 0; left-- {
		<-p.Started // one prompt showing
		if got := b.Pending(); got != left {
			t.Errorf("Pending() = %d while %d requests are unanswered", got, left)
		}
		p.Gate <- struct{}{}
		waitFor(t, "pending to fall", func() bool { return b.Pending() == left-1 })
	}
	for i, out := range outs {
		if r := <-out; r.err != nil || !r.d.Allowed {
			t.Errorf("request %d: %+v, %v", i, r.d, r.err)
		}
	}
	if m := p.MaxActive(); m != 1 {
		t.Errorf("at most %d prompts ran at once, want 1", m)
	}
}

// TestQueueOrder: prompts are shown in arrival order.
func TestQueueOrder(t *testing.T) {
	t.Parallel()
	p := &permissionstest.Prompter{Answer: permissions.AnswerOnce, Gate: make(chan struct{}), Started: make(chan permissions.Request)}
	b, err := permissions.NewBroker(permissions.Options{Prompter: p})
	if err != nil {
		t.Fatal(err)
	}
	objects := []string{"a", "b", "c", "d"}
	var outs []<-chan result
	for i, o := range objects {
		r := execNotes
		r.Object = o
		outs = append(outs, start(t, t.Context(), b, r))
		waitFor(t, "request queued", func() bool { return b.Pending() == i+1 })
	}
	for _, want := range objects {
		if got := (<-p.Started).Object; got != want {
			t.Errorf("prompted %q, want %q", got, want)
		}
		p.Gate <- struct{}{}
	}
	for _, out := range outs {
		<-out
	}
}

func TestQueueCancelledWaiter(t *testing.T) {
	t.Parallel()
	p := &permissionstest.Prompter{Answer: permissions.AnswerOnce, Gate: make(chan struct{}), Started: make(chan permissions.Request)}
	b, err := permissions.NewBroker(permissions.Options{Prompter: p})
	if err != nil {
		t.Fatal(err)
	}
	first := start(t, t.Context(), b, execNotes)
	<-p.Started
	ctx, cancel := context.WithCancel(t.Context())
	second := start(t, ctx, b, execNotes)
	waitFor(t, "two pending", func() bool { return b.Pending() == 2 })
	cancel()
	if r := <-second; !errors.Is(r.err, context.Canceled) || r.d.Allowed {
		t.Errorf("cancelled waiter: %+v, %v; want context.Canceled", r.d, r.err)
	}
	if got := b.Pending(); got != 1 {
		t.Errorf("Pending() = %d after a waiter left, want 1", got)
	}
	p.Gate <- struct{}{}
	if r := <-first; r.err != nil || !r.d.Allowed {
		t.Errorf("first request: %+v, %v", r.d, r.err)
	}
	if n := len(p.Calls()); n != 1 {
		t.Errorf("prompter called %d times, want 1 (the cancelled waiter never shown)", n)
	}
	if got := b.Pending(); got != 0 {
		t.Errorf("Pending() = %d at the end, want 0", got)
	}
	// The queue still works.
	go func() { <-p.Started; p.Gate <- struct{}{} }()
	if d := mustRequest(t, b, execNotes); !d.Allowed {
		t.Errorf("request after a cancelled waiter: %+v", d)
	}
}

// TestPromptBlocksForever: a dialog that never answers does not hold the
// request past its ctx, whether it honours ctx or not.
func TestPromptBlocksForever(t *testing.T) {
	t.Parallel()
	for _, ignore := range []bool{false, true} {
		name := "honours ctx"
		if ignore {
			name = "ignores ctx"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			gate := make(chan struct{})
			p := &permissionstest.Prompter{Answer: permissions.AnswerOnce, Gate: gate, IgnoreContext: ignore}
			b, err := permissions.NewBroker(permissions.Options{Prompter: p})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			defer cancel()
			done := make(chan result, 1)
			go func() {
				d, err := b.Request(ctx, execNotes)
				done <- result{d, err}
			}()
			select {
			case r := <-done:
				if !errors.Is(r.err, context.DeadlineExceeded) || r.d.Allowed {
					t.Errorf("Request = %+v, %v; want DeadlineExceeded", r.d, r.err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Request did not return after its ctx ended")
			}
			close(gate) // let a ctx-ignoring prompter go, so its goroutine ends
			waitFor(t, "the turn to be given back", func() bool { return b.Pending() == 0 })
			waitFor(t, "the unanswered request to be logged", func() bool {
				a, _ := b.Actions()
				return len(a) == 1
			})
			a, _ := b.Actions()
			if a[0].Decision.Allowed {
				t.Errorf("late answer logged as allowed: %+v", a[0])
			}
			if len(b.Grants()) != 0 {
				t.Errorf("late answer made grants: %+v", b.Grants())
			}
		})
	}
}

// TestQueuedRequestsSeeEarlierAnswer: a session answer decides the same
// request waiting behind it, without a second dialog.
func TestQueuedRequestsSeeEarlierAnswer(t *testing.T) {
	t.Parallel()
	p := &permissionstest.Prompter{Answer: permissions.AnswerSession, Gate: make(chan struct{}), Started: make(chan permissions.Request)}
	b, err := permissions.NewBroker(permissions.Options{Prompter: p})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	first := start(t, ctx, b, execNotes)
	<-p.Started
	second := start(t, ctx, b, execNotes)
	waitFor(t, "two pending", func() bool { return b.Pending() == 2 })
	p.Gate <- struct{}{}
	r1, r2 := <-first, <-second
	if r1.d.Source != permissions.SourceUser || r2.d.Source != permissions.SourceGrant || r2.d.GrantID != r1.d.GrantID {
		t.Errorf("decisions = %+v and %+v, want the user, then the grant the user made", r1.d, r2.d)
	}
	if n := len(p.Calls()); n != 1 {
		t.Errorf("prompter called %d times, want 1", n)
	}
}

// TestConcurrentUse runs requests, revocations and reads at once, for -race.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.broker(t, permissionstest.NewPrompter(permissions.AnswerSession))
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := execNotes
			r.Object = []string{"a", "b", "c", "d"}[i%4]
			if _, err := b.Request(t.Context(), r); err != nil {
				t.Error(err)
			}
			switch i % 8 {
			case 0:
				_ = b.RevokeAll("")
			case 1:
				_ = b.Grants()
			case 2:
				_, _ = b.Actions()
			case 3:
				_ = b.Pending()
			}
		})
	}
	wg.Wait()
	actions, err := b.Actions()
	if err != nil || len(actions) != n {
		t.Errorf("Actions() has %d entries, %v; want %d", len(actions), err, n)
	}
	for i, a := range actions {
		if a.Seq != uint64(i+1) {
			t.Fatalf("entry %d has seq %d", i, a.Seq)
		}
	}
}
