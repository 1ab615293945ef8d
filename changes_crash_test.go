package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// crashPrompter allows the shell's command once and, at the change set
// that follows, says "asked" and never answers (the person has not yet).
type crashPrompter struct{}

func (crashPrompter) Prompt(ctx context.Context, r permissions.Request) (permissions.Decision, error) {
	if r.Kind == permissions.KindChanges {
		fmt.Println("asked", r.Changes.ID)
		<-ctx.Done()
		return permissions.Decision{}, ctx.Err()
	}
	return permissions.Decision{Answer: permissions.AnswerOnce}, nil
}

// TestChangesCrashChild is the child of TestAPendingSetSurvivesACrash:
// the shell app writes in the workspace, and the bulkhead is killed
// (kill -9) while the change set's dialog waits for its answer.
func TestChangesCrashChild(t *testing.T) {
	if os.Getenv("BULKHEAD_CRASH_CHILD") != "changes" {
		t.Skip("helper process")
	}
	cfg := crashConfig(os.Getenv("BULKHEAD_CRASH_DIR"), os.Getenv("BULKHEAD_CRASH_HOST"))
	eng, err := engine.Open(context.Background(), cfg, engine.Options{Prompter: crashPrompter{}})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	chat, _ := eng.Hub.NewChat(false)
	fmt.Println("chat", chat.ID)
	_, err = eng.Hub.Ask(context.Background(), chat.ID, "with shell run "+crashCommand, nil) // waits at the dialog until killed
	fmt.Println("error", err)
	os.Exit(3)
}

const crashCommand = "echo planted > planted.txt"

func crashConfig(data, host string) config.Config {
	return config.Config{DataDir: data, Ollama: config.Ollama{Host: host}, Workspace: filepath.Join(data, "..", "ws"), Enable: []string{"shell"},
		Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: "m", History: 4}}
}

// recorder answers every dialog by a rule and keeps the change sets it
// was asked, with what the folder held at that moment.
type recorder struct {
	mu     sync.Mutex
	ws     string
	sets   []permissions.ChangeSet
	landed []bool
}

func (p *recorder) Prompt(_ context.Context, r permissions.Request) (permissions.Decision, error) {
	if r.Kind != permissions.KindChanges {
		return permissions.Decision{Answer: permissions.AnswerDeny}, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := os.Stat(filepath.Join(p.ws, "planted.txt"))
	p.sets = append(p.sets, *r.Changes)
	p.landed = append(p.landed, err == nil)
	return permissions.Decision{Answer: permissions.AnswerOnce}, nil
}

// A change set pending when bulkhead is killed (kill -9 between the call
// and the answer) is there when it starts again: nothing of it applied
// by itself, `bulkhead changes` lists it, and the chat's next turn
// offers it again; accepted, it lands.
func TestAPendingSetSurvivesACrash(t *testing.T) {
	if r := sandboxProbe(t); !stagedHolds(r) {
		t.Skip("no staged writes here")
	}
	root := t.TempDir()
	data, ws := filepath.Join(root, "data"), filepath.Join(root, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	srv := ollamatest.NewScripted(t, writeScript("shell", crashCommand, ws), "m")
	cmd := exec.Command(os.Args[0], "-test.run=^TestChangesCrashChild$", "-test.v")
	cmd.Env = append(os.Environ(), "BULKHEAD_CRASH_CHILD=changes", "BULKHEAD_CRASH_DIR="+data, "BULKHEAD_CRASH_HOST="+srv.Host())
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	asked := make(chan [2]string, 1)
	go func() {
		var chat string
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "chat "); ok {
				chat = id
			}
			if id, ok := strings.CutPrefix(sc.Text(), "asked "); ok {
				asked <- [2]string{chat, id}
			}
		}
		close(asked)
	}()
	var got [2]string
	select {
	case got = <-asked:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the child was never asked about its change set")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	chat, set := got[0], got[1]
	if _, err := os.Stat(filepath.Join(ws, "planted.txt")); err == nil {
		t.Fatal("the change set was applied without an answer")
	}

	// Started again: listed, not applied, offered when the chat resumes.
	p := &recorder{ws: ws}
	eng, err := engine.Open(context.Background(), crashConfig(data, srv.Host()), engine.Options{Prompter: p})
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer eng.Close()
	pending := eng.Hub.PendingChanges(context.Background(), nil)
	if len(pending) != 1 || pending[0].ID != set || pending[0].Chat != chat || pending[0].Entries != 1 {
		t.Fatalf("after the crash, the pending set is listed: %+v", pending)
	}
	if _, err := os.Stat(filepath.Join(ws, "planted.txt")); err == nil {
		t.Fatal("the change set was applied by itself at the start")
	}
	if _, err := eng.Hub.Ask(context.Background(), chat, "with shell run "+crashCommand, nil); err != nil && !errors.Is(err, context.Canceled) {
		t.Logf("the resumed turn: %v", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.sets) == 0 || p.sets[0].ID != set || p.landed[0] {
		t.Fatalf("the chat's next turn offers the pending set first, before it lands: %+v %v", p.sets, p.landed)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "planted.txt")); err != nil || string(b) != "planted\n" {
		t.Errorf("accepted, it lands: %q %v", b, err)
	}
}
