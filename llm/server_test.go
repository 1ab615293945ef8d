package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/internal/testenv"
	"github.com/bulkhead-dev/bulkhead/llm"
)

// TestMain lets the test binary stand in for `ollama serve` when
// EnsureServer starts it as a child: it serves on $OLLAMA_HOST.
func TestMain(m *testing.M) {
	if os.Getenv("BULKHEAD_FAKE_OLLAMA_SERVE") == "1" && len(os.Args) > 1 && os.Args[len(os.Args)-1] == "serve" {
		l, err := net.Listen("tcp", os.Getenv("OLLAMA_HOST"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("fake ollama serving on", l.Addr())
		_ = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "Ollama is running") }))
		os.Exit(0)
	}
	testenv.Main(m, false)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestEnsureServerStartsAChild(t *testing.T) {
	t.Setenv("BULKHEAD_FAKE_OLLAMA_SERVE", "1")
	addr := freeAddr(t)
	log := &syncWriter{}
	srv, err := llm.EnsureServer(context.Background(), addr, llm.EnsureOptions{Binary: os.Args[0], Log: log, Wait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if srv == nil {
		t.Fatal("no child started although nothing was listening")
	}
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("child not answering: %v", err)
	}
	resp.Body.Close()
	// Now that one answers, EnsureServer starts nothing.
	again, err := llm.EnsureServer(context.Background(), addr, llm.EnsureOptions{Binary: "/nonexistent"})
	if err != nil || again != nil {
		t.Fatalf("second Ensure = %v, %v; want nil, nil", again, err)
	}
	srv.Stop()
	if !strings.Contains(log.String(), "fake ollama serving") {
		t.Errorf("child output did not reach the log: %q", log.String())
	}
	if _, err := http.Get("http://" + addr + "/"); err == nil {
		t.Fatal("child still answering after Stop")
	}
}

func TestEnsureServerWithoutBinarySaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := llm.EnsureServer(context.Background(), freeAddr(t), llm.EnsureOptions{})
	var ue *llm.UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "ollama.com/download") {
		t.Fatalf("want an install hint, got %v", err)
	}
}

type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// A server that is there but slow to answer (a model loading, every core
// busy) is reachable: EnsureServer neither calls it absent nor tries to
// start another on its port.
func TestEnsureServerWaitsForASlowServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(3 * time.Second) // longer than a connection takes to be refused or made
		fmt.Fprint(w, "Ollama is running")
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	got, err := llm.EnsureServer(context.Background(), l.Addr().String(), llm.EnsureOptions{Binary: "/nonexistent"})
	if err != nil || got != nil {
		t.Fatalf("Ensure = %v, %v; want nil, nil (the server is there, only slow)", got, err)
	}
}

// Something that takes connections and never answers holds the port: the
// error says so, rather than telling the user to install Ollama.
func TestEnsureServerNamesASilentServer(t *testing.T) {
	defer llm.SetPingAnswerForTest(500 * time.Millisecond)()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release })}
	go srv.Serve(l)
	t.Cleanup(func() { close(release); srv.Close() })
	t.Setenv("PATH", t.TempDir())
	_, err = llm.EnsureServer(context.Background(), l.Addr().String(), llm.EnsureOptions{})
	var ue *llm.UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "accepted the connection but sent no answer") || strings.Contains(err.Error(), "ollama.com/download") {
		t.Fatalf("want an error naming the silent server, got %v", err)
	}
}
