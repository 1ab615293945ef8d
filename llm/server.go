package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Server is an `ollama serve` child process that bulkhead started because
// nothing answered at a loopback host. Stop ends it.
type Server struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// EnsureOptions tunes EnsureServer.
type EnsureOptions struct {
	// Binary is the ollama executable to start; "" means "ollama" on PATH.
	Binary string
	// Log receives the child's stdout and stderr; nil discards them. They
	// never go to the terminal.
	Log io.Writer
	// Wait bounds how long the child may take to answer; 0 means 30s.
	Wait time.Duration
}

// EnsureServer makes sure an Ollama server answers at host. If one already
// does, it returns (nil, nil). If none does and the host is on this machine
// and an ollama binary is found, it starts `ollama serve` bound to that host
// and waits until it answers, returning the child (the caller stops it). In
// every other case it returns an *UnreachableError that says what to do.
func EnsureServer(ctx context.Context, host string, opts EnsureOptions) (*Server, error) {
	base, err := ParseHost(host)
	if err != nil {
		return nil, err
	}
	if ping(ctx, base.String()) == nil {
		return nil, nil
	}
	if !isLoopback(base) {
		return nil, &UnreachableError{Host: base.String(), Hint: "Start Ollama on that machine, or point ollama.host at a running server"}
	}
	bin := opts.Binary
	if bin == "" {
		bin, err = exec.LookPath("ollama")
		if err != nil {
			return nil, &UnreachableError{Host: base.String(), Hint: installHint}
		}
	}
	wait := opts.Wait
	if wait == 0 {
		wait = 30 * time.Second
	}
	out := opts.Log
	if out == nil {
		out = io.Discard
	}

	cmd := exec.Command(bin, "serve")
	cmd.Env = serverEnv(os.Environ(), base.Host)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, &UnreachableError{Host: base.String(), Err: fmt.Errorf("start %s serve: %w", bin, err), Hint: installHint}
	}
	s := &Server{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()

	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if ping(ctx, base.String()) == nil {
			return s, nil
		}
		select {
		case <-s.done:
			return nil, &UnreachableError{Host: base.String(), Err: fmt.Errorf("%s serve exited: %v", bin, cmd.ProcessState), Hint: "see the log for its output"}
		case <-ctx.Done():
			s.Stop()
			return nil, &UnreachableError{Host: base.String(), Err: fmt.Errorf("%s serve did not answer within %s", bin, wait)}
		case <-tick.C:
		}
	}
}

// Stop ends the child (SIGTERM, then SIGKILL after 5s) and waits for it.
func (s *Server) Stop() {
	if s == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// ping checks that an Ollama server answers at base.
func ping(ctx context.Context, base string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, base+"/", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		return errors.New(resp.Status)
	}
	return nil
}

// ParallelSlots is the OLLAMA_NUM_PARALLEL a server bulkhead starts runs
// with, unless the environment sets one: the hub's planner and the plain
// answer it drafts meanwhile each keep a slot — and a cached prompt
// prefix — of their own, and a third takes the memory upkeep.
const ParallelSlots = 3

// serverEnv is the environment of an `ollama serve` bulkhead starts:
// ParallelSlots, unless the user's environment sets a number. It does not
// set OLLAMA_MULTIUSER_CACHE, which would keep the planner's prefix
// cached while apps work (a prompt no slot wholly begins takes the slot
// used longest ago, the longest cached prefix copied in): in Ollama 0.17.4
// copying a prefix between slots aborts the runner of a model on the
// llama.cpp engine (llama_memory_seq_cp), so the user's first app request
// would end in "model runner has unexpectedly stopped".
func serverEnv(env []string, host string) []string {
	out := append([]string(nil), env...)
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "OLLAMA_NUM_PARALLEL=") }) {
		out = append(out, fmt.Sprintf("OLLAMA_NUM_PARALLEL=%d", ParallelSlots))
	}
	return append(out, "OLLAMA_HOST="+host)
}
