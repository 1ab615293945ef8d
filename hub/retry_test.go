package hub_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/headless"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// openOperator opens the store in dir and an operator over it whose
// models are srv's; closing it closes both.
func openOperator(t *testing.T, dir string, srv *ollamatest.Scripted) (*hub.Operator, func()) {
	t.Helper()
	store, err := memory.Open(dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hubClient, _ := llm.New(llm.Config{Host: srv.Host(), Model: hubModel}, nil)
	op, err := hub.New(hub.Options{
		Store:    store,
		HubModel: hubClient,
		SpokeModel: func(string) (spokes.Model, error) {
			return llm.New(llm.Config{Host: srv.Host(), Model: spokeModel}, nil)
		},
		History: 4, SpokeHistory: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	return op, func() { op.Close(); store.Close() }
}

// hubLogKey is the store's key of the hub's interaction seq of chat
// (memory/doc.go, "Key layout"), for a test that damages one on disk.
func hubLogKey(chat string, seq uint64) []byte {
	k := []byte{0x01, 3, 'h', 'u', 'b', 'l'}
	k = binary.AppendUvarint(k, uint64(len(chat)))
	k = append(k, chat...)
	return binary.BigEndian.AppendUint64(k, seq)
}

// Retry reads the turn it runs again, not the chat's whole log: with the
// chat's first turn unreadable on disk (which a full read reports), the
// cut last turn is still retried, and what headless --retry asks for (the
// newest turn alone) is still answered.
func TestRetryReadsOnlyItsTurn(t *testing.T) {
	t.Parallel()
	const turns = 12
	var mu sync.Mutex
	answered := 0
	srv := ollamatest.NewScripted(t, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply {
		mu.Lock()
		defer mu.Unlock()
		answered++
		if answered == turns {
			return ollamatest.Reply{Chunks: []string{"half ", "an answer"}, CutAfter: 1}
		}
		return ollamatest.Text("whole answer")
	}), hubModel, spokeModel)
	dir := t.TempDir()

	op, closeOp := openOperator(t, dir, srv)
	chat, err := op.NewChat(false)
	if err != nil {
		t.Fatal(err)
	}
	var last hub.Turn
	for i := range turns {
		last, err = op.Ask(context.Background(), chat.ID, "tell me", nil)
		if (i == turns-1) != (err != nil) {
			t.Fatalf("turn %d: %v", i+1, err)
		}
	}
	closeOp()
	if !last.Retryable() || last.Seq != turns {
		t.Fatalf("last turn %+v", last)
	}

	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(txn *badger.Txn) error { return txn.Set(hubLogKey(chat.ID, 1), []byte("{not json")) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	op, closeOp = openOperator(t, dir, srv)
	defer closeOp()
	if _, err := op.Turns(chat.ID); err == nil {
		t.Fatal("reading the whole chat must report its damaged first turn")
	}
	newest, more, err := op.TurnsBefore(chat.ID, 0, 1)
	if err != nil || len(newest) != 1 || newest[0].Seq != turns || !newest[0].Retryable() || !more {
		t.Fatalf("TurnsBefore(0, 1) = %+v, %v, %v", newest, more, err)
	}
	turn, err := op.Retry(context.Background(), chat.ID, turns, nil)
	if err != nil || turn.Status != memory.StatusOK || turn.Answer != "whole answer" {
		t.Fatalf("Retry = %+v, %v", turn, err)
	}
	for _, seq := range []uint64{0, turns + 1} {
		if _, err := op.Retry(context.Background(), chat.ID, seq, nil); err == nil || !strings.Contains(err.Error(), "has no turn") {
			t.Errorf("Retry of turn %d: %v, want \"has no turn\"", seq, err)
		}
	}
	if _, err := op.Retry(context.Background(), chat.ID, turns, nil); err == nil {
		t.Error("retrying a finished turn must fail")
	}
}

// BenchmarkRetry is `bulkhead ask --retry` past the process's start: the
// headless run finds the chat's last turn, cut, and the hub runs it again
// (the instant model answers). One store holds both chats, one of 1 turn
// and one of 10,000, so that the two see the same database.
func BenchmarkRetry(b *testing.B) {
	store, err := memory.Open(b.TempDir(), memory.Options{})
	if err != nil {
		b.Fatal(err)
	}
	m := instantModel{plan: `{"steps":[{"id":"s1","functionality":"chat","query":"q","depends_on":[]}]}`}
	op, err := hub.New(hub.Options{Store: store, HubModel: m, History: 8, SpokeHistory: 10,
		SpokeModel: func(string) (spokes.Model, error) { return m, nil }})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { op.Close(); store.Close() }()
	ns, _ := store.Namespace("hub")
	meta, _ := json.Marshal(map[string]any{
		"plan":  map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "chat", "query": "q", "depends_on": []string{}}}},
		"usage": map[string]any{"calls": 2, "prompt_tokens": 900, "eval_tokens": 120},
	})
	// seed logs a chat of turns turns and returns it and its last turn.
	seed := func(turns int) (string, memory.Interaction) {
		chat, err := op.NewChat(false)
		if err != nil {
			b.Fatal(err)
		}
		var last memory.Interaction
		for i := range turns {
			last, err = ns.Append(chat.ID, memory.Interaction{Input: fmt.Sprintf("question %d", i),
				Output: "an answer of a few words", Status: memory.StatusOK, Meta: meta})
			if err != nil {
				b.Fatal(err)
			}
		}
		last.Output, last.Status = "half an", memory.StatusCut
		return chat.ID, last
	}
	type chat struct {
		id   string
		last memory.Interaction
	}
	chats := map[int]chat{}
	for _, turns := range []int{1, 10_000} {
		id, last := seed(turns)
		chats[turns] = chat{id, last}
	}
	for _, turns := range []int{1, 10_000} {
		chat, last := chats[turns].id, chats[turns].last
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				if err := ns.Update(last); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := headless.Run(context.Background(), op, "", headless.Options{Chat: chat, Retry: true}, io.Discard, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
