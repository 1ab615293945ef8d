package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
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
	perr := ping(ctx, base.String())
	if perr == nil {
		return nil, nil
	}
	var silent silentError
	if errors.As(perr, &silent) {
		// Something holds the port: starting a server there would fail.
		return nil, &UnreachableError{Host: base.String(), Err: perr, Hint: "If it is Ollama, it is busy or stuck: restart it, or point ollama.host at a running server"}
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
// pingDial bounds how long ping waits for a connection: a host where
// nothing listens refuses at once, one behind a firewall that drops packets
// never answers.
const pingDial = 3 * time.Second

// pingAnswer bounds how long ping waits, once connected, for the server's
// answer. A server that accepted the connection is there: under load (a
// model loading, every core busy) it may take seconds to answer, and that
// is slowness, not absence.
var pingAnswer = 30 * time.Second

// silentError says that something accepted a connection at the host but
// sent no answer in time.
type silentError struct{ wait time.Duration }

func (e silentError) Error() string {
	return fmt.Sprintf("it accepted the connection but sent no answer within %s", e.wait)
}

// ping asks the server at base whether it runs. A connection that cannot be
// made fails within pingDial; one that was made waits up to pingAnswer for
// the answer and fails with a silentError after that.
func ping(ctx context.Context, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, base+"/", nil)
	if err != nil {
		return err
	}
	var connected atomic.Bool
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{Timeout: pingDial}).DialContext(ctx, network, addr)
			connected.Store(err == nil)
			return c, err
		},
		ResponseHeaderTimeout: pingAnswer,
		DisableKeepAlives:     true,
	}}
	resp, err := client.Do(req)
	if err != nil {
		var ne net.Error
		if connected.Load() && ctx.Err() == nil && errors.As(err, &ne) && ne.Timeout() {
			return silentError{pingAnswer}
		}
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
