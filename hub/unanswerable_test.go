package hub_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/files"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// unanswerable is the Prompter of a run with no one to ask.
type unanswerable struct{ asked int }

func (u *unanswerable) Prompt(context.Context, permissions.Request) (permissions.Decision, error) {
	u.asked++
	return permissions.Decision{}, permissions.ErrUnanswerable
}

// A dialog that no one can answer — here a write an app's spoke asked
// for in the middle of its work, which used to come back to the spoke as
// a refusal it answered around — ends the turn there: nothing is done
// past it, the turn's error says so, and it is kept unfinished; run again
// with someone to answer, it does what it was asked.
func TestADialogNoOneCanAnswerEndsTheTurn(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	p := &unanswerable{}
	rig := hubtest.New(t, hubtest.Config{Script: writeScript("notes.txt"), Apps: []apps.App{files.New(ws, files.Options{})}, Prompter: p, Rules: allowExec})
	chat, _ := rig.Op.NewChat(false)
	turn, err := rig.Op.Ask(context.Background(), chat.ID, "write the notes", nil)
	if !errors.Is(err, permissions.ErrUnanswerable) {
		t.Fatalf("the turn's error: %v", err)
	}
	if p.asked != 1 {
		t.Fatalf("asked %d times", p.asked)
	}
	if turn.Status != memory.StatusCancelled || !turn.Retryable() || turn.Answer == "Done." {
		t.Fatalf("the turn: status %q answer %q", turn.Status, turn.Answer)
	}
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the write went ahead: %v", err)
	}

	// Kept, and run again with an answer.
	last, _, err := rig.Op.TurnsBefore(chat.ID, 0, 1)
	if err != nil || len(last) != 1 || !last[0].Retryable() {
		t.Fatalf("the kept turn: %+v %v", last, err)
	}
	rig.Broker.SetPrompter(allowAll{})
	if _, err := rig.Op.Retry(context.Background(), chat.ID, last[0].Seq, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); err != nil {
		t.Fatalf("the retry did not write: %v", err)
	}
}

type allowAll struct{}

func (allowAll) Prompt(_ context.Context, r permissions.Request) (permissions.Decision, error) {
	return permissions.Decision{RequestID: r.ID, Answer: permissions.AnswerOnce, Allowed: true, Source: permissions.SourceUser}, nil
}
