package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/memory"
)

// TestCrashChild is the child of TestKillMidTurnKeepsCompletedTurns: it
// runs two turns to completion, starts a third that never finishes, says
// so, and waits to be killed.
func TestCrashChild(t *testing.T) {
	if os.Getenv("BULKHEAD_CRASH_CHILD") != "1" {
		t.Skip("helper process")
	}
	cfg := config.Config{DataDir: os.Getenv("BULKHEAD_CRASH_DIR"), Ollama: config.Ollama{Host: os.Getenv("BULKHEAD_CRASH_HOST")},
		Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: "m", History: 4}}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	chat, _ := eng.Hub.NewChat(false)
	for i := 1; i <= 2; i++ {
		if _, err := eng.Hub.Ask(context.Background(), chat.ID, fmt.Sprintf("question %d", i), nil); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
	}
	fmt.Println("chat", chat.ID)
	_, _ = eng.Hub.Ask(context.Background(), chat.ID, "question 3", nil) // hangs until killed
	os.Exit(3)
}

func TestKillMidTurnKeepsCompletedTurns(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Planned(chatPlan, func(req *api.ChatRequest) ollamatest.Reply {
		q := req.Messages[len(req.Messages)-1].Content
		if q == "question 3" {
			return ollamatest.Reply{Chunks: []string{"never finished"}, Hang: true}
		}
		return ollamatest.Text("answer to " + q)
	}), "m")
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
	cmd.Env = append(os.Environ(), "BULKHEAD_CRASH_CHILD=1", "BULKHEAD_CRASH_DIR="+dir, "BULKHEAD_CRASH_HOST="+srv.Host())
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	chatID := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "chat "); ok {
				chatID <- id
			}
		}
		close(chatID)
	}()
	var id string
	select {
	case id = <-chatID:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("child never finished its turns")
	}
	// Wait until the third turn reached the spoke, then kill -9.
	deadline := time.Now().Add(30 * time.Second)
	for len(srv.Requests()) < 6 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	cfg := config.Config{DataDir: dir, Ollama: config.Ollama{Host: srv.Host()}, Hub: config.Owner{Model: "m"}, Spokes: config.Owner{Model: "m"}}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{})
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer eng.Close()
	turns, err := eng.Hub.Turns(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 3 {
		t.Fatalf("want 3 turns after the restart, got %d: %+v", len(turns), turns)
	}
	for i, want := range []string{"answer to question 1", "answer to question 2"} {
		if turns[i].Answer != want || turns[i].Status != memory.StatusOK {
			t.Fatalf("completed turn %d lost: %+v", i+1, turns[i])
		}
	}
	if turns[2].Query != "question 3" || !turns[2].Retryable() {
		t.Fatalf("the interrupted turn must be kept and retryable: %+v", turns[2])
	}
}
