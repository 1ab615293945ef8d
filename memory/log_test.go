package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestAppendUpdateInteractions(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	n := mustNamespace(t, s, "hub")
	// "c1" and "c10" share a byte prefix; their logs must not mix.
	for i := range 3 {
		mustAppend(t, n, "c1", fmt.Sprintf("c1-%d", i+1))
		mustAppend(t, n, "c10", fmt.Sprintf("c10-%d", i+1))
	}

	started := time.Date(2026, 11, 29, 22, 32, 45, 0, time.UTC)
	it, err := n.Append("c1", Interaction{
		Input:   "plan this",
		Meta:    json.RawMessage(`{"steps":["a","b"]}`),
		Started: started,
	})
	if err != nil {
		t.Fatal(err)
	}
	if it.Seq != 4 || it.Chat != "c1" || it.Status != StatusPending {
		t.Fatalf("Append returned %+v; want seq 4, chat c1, pending", it)
	}
	it.Output, it.Status = "done", StatusOK
	it.Usage = Usage{Calls: 2, PromptTokens: 10, EvalTokens: 20, Duration: time.Second}
	it.Ended = started.Add(time.Second)
	if err := n.Update(it); err != nil {
		t.Fatalf("Update: %v", err)
	}

	got, err := n.Interactions("c1")
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{1, 2, 3, 4}; !slices.Equal(seqs(got), want) {
		t.Fatalf("Interactions(c1) seqs = %v, want %v", seqs(got), want)
	}
	if want := []string{"c1-1", "c1-2", "c1-3", "plan this"}; !slices.Equal(inputs(got), want) {
		t.Errorf("Interactions(c1) inputs = %q, want %q", inputs(got), want)
	}
	last := got[3]
	if last.Output != "done" || last.Status != StatusOK || last.Usage != it.Usage ||
		!last.Started.Equal(started) || !last.Ended.Equal(it.Ended) ||
		string(last.Meta) != `{"steps":["a","b"]}` {
		t.Errorf("stored interaction = %+v, want %+v", last, it)
	}

	tests := []struct {
		name string
		it   Interaction
	}{
		{"missing seq", Interaction{Chat: "c1", Seq: 99}},
		{"seq zero", Interaction{Chat: "c1", Seq: 0}},
		{"missing chat", Interaction{Chat: "nope", Seq: 1}},
	}
	for _, tt := range tests {
		if err := n.Update(tt.it); !errors.Is(err, ErrNotFound) {
			t.Errorf("Update(%s) error = %v, want ErrNotFound", tt.name, err)
		}
	}
	if _, err := n.Append("", Interaction{}); err == nil {
		t.Error("Append to an empty chat succeeded")
	}
}

func TestRecent(t *testing.T) {
	t.Parallel()
	s := openEphemeralTest(t)
	n := mustNamespace(t, s, "spoke/a")
	for i := range 5 {
		mustAppend(t, n, "chat", fmt.Sprintf("m%d", i+1))
	}
	mustAppend(t, n, "chat2", "other chat")
	tests := []struct {
		chat  string
		limit int
		want  []uint64
	}{
		{"chat", 2, []uint64{4, 5}},
		{"chat", 1, []uint64{5}},
		{"chat", 5, []uint64{1, 2, 3, 4, 5}},
		{"chat", 50, []uint64{1, 2, 3, 4, 5}},
		{"chat", 0, nil},
		{"chat", -1, nil},
		{"chat2", 3, []uint64{1}},
		{"none", 3, nil},
	}
	for _, tt := range tests {
		got, err := n.Recent(tt.chat, tt.limit)
		if err != nil || !slices.Equal(seqs(got), tt.want) {
			t.Errorf("Recent(%q, %d) = %v, %v; want %v", tt.chat, tt.limit, seqs(got), err, tt.want)
		}
	}
}

// Recent must read from the end of the log, not load it all: its
// allocations may not grow with the length of the log. Not parallel:
// AllocsPerRun counts every allocation in the process.
func TestRecentDoesNotLoadAll(t *testing.T) {
	s := openEphemeralTest(t)
	n := mustNamespace(t, s, "hub")
	seedLog(t, n, "long", 5000)
	seedLog(t, n, "short", 5)
	measure := func(chat string) float64 {
		return testing.AllocsPerRun(20, func() {
			if got, err := n.Recent(chat, 3); err != nil || len(got) != 3 {
				t.Fatalf("Recent(%q, 3) = %d items, %v", chat, len(got), err)
			}
		})
	}
	short, long := measure("short"), measure("long")
	if long > 2*short+50 {
		t.Errorf("Recent on 5000 entries allocates %.0f times, on 5 entries %.0f", long, short)
	}
}

func TestConcurrentAppends(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		owners []string
		chat   bool // whether the chat exists in the index, so Appends touch it
	}{
		{"one namespace", []string{"spoke/a"}, false},
		{"one namespace, indexed chat", []string{"hub"}, true},
		{"five namespaces, indexed chat", []string{"hub", "spoke/a", "spoke/b", "spoke/c", "spoke/d"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openTest(t)
			chat := "chat"
			if tt.chat {
				c, err := s.CreateChat("busy")
				if err != nil {
					t.Fatal(err)
				}
				chat = c.ID
			}
			const goroutines = 50
			var wg sync.WaitGroup
			errs := make(chan error, goroutines)
			for i := range goroutines {
				n := mustNamespace(t, s, tt.owners[i%len(tt.owners)])
				wg.Go(func() {
					if _, err := n.Append(chat, Interaction{Input: fmt.Sprint(i)}); err != nil {
						errs <- err
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			per := goroutines / len(tt.owners)
			for _, owner := range tt.owners {
				got, err := mustNamespace(t, s, owner).Interactions(chat)
				if err != nil {
					t.Fatal(err)
				}
				for i, it := range got {
					if it.Seq != uint64(i+1) {
						t.Fatalf("%s: seqs = %v, want 1..%d", owner, seqs(got), per)
					}
				}
				if len(got) != per {
					t.Errorf("%s: %d interactions, want %d", owner, len(got), per)
				}
			}
		})
	}
}

// Before pages a chat's log backwards: newest first, a page at a time,
// saying whether older interactions remain.
func TestBeforePagesBackwards(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	n := mustNamespace(t, s, "hub")
	for i := range 7 {
		mustAppend(t, n, "c1", fmt.Sprintf("q%d", i+1))
		mustAppend(t, n, "c10", "other")
	}
	page, more, err := n.Before("c1", 0, 3)
	if err != nil || !more || len(page) != 3 || page[0].Seq != 5 || page[2].Seq != 7 {
		t.Fatalf("newest page: %+v more=%v err=%v", page, more, err)
	}
	page, more, _ = n.Before("c1", 5, 3)
	if !more || len(page) != 3 || page[0].Seq != 2 || page[2].Seq != 4 {
		t.Fatalf("second page: %+v more=%v", page, more)
	}
	page, more, _ = n.Before("c1", 2, 3)
	if more || len(page) != 1 || page[0].Seq != 1 || page[0].Input != "q1" {
		t.Fatalf("last page: %+v more=%v", page, more)
	}
	if page, more, _ = n.Before("c1", 1, 3); more || len(page) != 0 {
		t.Fatalf("before the first: %+v more=%v", page, more)
	}
}

func TestInteractionBySeq(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	n := mustNamespace(t, s, "hub")
	for i := range 3 {
		mustAppend(t, n, "c1", fmt.Sprintf("c1-%d", i+1))
		mustAppend(t, n, "c10", fmt.Sprintf("c10-%d", i+1))
	}
	got, err := n.Interaction("c1", 2)
	if err != nil || got.Seq != 2 || got.Chat != "c1" || got.Input != "c1-2" {
		t.Errorf("Interaction(c1, 2) = %+v, %v", got, err)
	}
	for _, tt := range []struct {
		chat string
		seq  uint64
	}{{"c1", 0}, {"c1", 4}, {"c", 1}, {"nope", 1}} {
		if _, err := n.Interaction(tt.chat, tt.seq); !errors.Is(err, ErrNotFound) {
			t.Errorf("Interaction(%q, %d) error = %v, want ErrNotFound", tt.chat, tt.seq, err)
		}
	}
	if _, err := mustNamespace(t, s, "spoke/a").Interaction("c1", 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("another namespace's Interaction error = %v, want ErrNotFound", err)
	}
}

// WindowStart shows at most n earlier interactions, n/2+1 or more once a
// chat is longer than n, the last ones, and moves its first Seq at most
// once in n/2 turns.
func TestWindowStart(t *testing.T) {
	for n := 1; n <= 10; n++ {
		moves := 0
		for next := uint64(1); next <= 60; next++ {
			from := WindowStart(next, n)
			shown := int(next - from)
			switch {
			case from < 1 || shown < 0:
				t.Fatalf("n %d, next %d: from %d", n, next, from)
			case shown > n:
				t.Errorf("n %d, next %d: %d shown", n, next, shown)
			case next <= uint64(n)+1 && from != 1:
				t.Errorf("n %d, next %d: from %d in a chat no longer than the window", n, next, from)
			case next > uint64(n)+1 && shown < n/2+1:
				t.Errorf("n %d, next %d: %d shown, want %d or more", n, next, shown, n/2+1)
			}
			if next > 1 && from != WindowStart(next-1, n) {
				moves++
			}
		}
		if step := max(n/2, 1); moves > (60-n)/step+1 {
			t.Errorf("n %d: the window moved %d times in 60 turns, want at most one in %d", n, moves, step)
		}
	}
}
