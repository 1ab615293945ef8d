package ollamatest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

// OllamaVersion is the ollama release the integration tests are written
// against; scripts/ollama-build.sh builds it.
const OllamaVersion = "v0.17.4"

// TinyTemplate is the chat template of the tiny model created by StartReal.
const TinyTemplate = "{{ range .Messages }}{{ .Role }}: {{ .Content }}\n{{ end }}assistant: "

// TinyToolsTemplate is TinyTemplate with the tools named after the first
// message (the system prompt), as the templates of the common model
// families render them (Qwen's, Llama's): prompts that begin alike share
// a cached prefix whatever tools they offer. Ollama reports a model whose
// template uses .Tools as able to call tools.
const TinyToolsTemplate = "{{ range $i, $m := .Messages }}{{ $m.Role }}: {{ $m.Content }}\n{{ if and (eq $i 0) $.Tools }}tools:{{ range $.Tools }} {{ .Function.Name }}{{ end }}\n{{ end }}{{ end }}assistant: "

// TinyParameters are the default options of the tiny model: a small context,
// short answers and greedy (deterministic) decoding. Requests may override
// them through their Options.
var TinyParameters = map[string]any{
	"num_ctx":     512,
	"num_predict": 24,
	"temperature": 0,
	"seed":        42,
	// One thread: the model is tiny, and ggml threads spin-wait for each other,
	// which on a busy 2-core machine costs far more than it saves.
	"num_thread": 1,
}

// Timeouts of StartReal's phases. They are generous so that a loaded
// 2-core CI machine running `go test -race` does not flake.
const (
	realStartTimeout  = 60 * time.Second
	realCreateTimeout = 60 * time.Second
	realKillTimeout   = 15 * time.Second
)

// Real is a running `ollama serve` child with the tiny model created.
type Real struct {
	// Host is the base URL of the server, e.g. http://127.0.0.1:PORT.
	Host string
	// Model is the name of the tiny model created on the server.
	Model string
	// Client is an api.Client for Host using a plain http.Client.
	Client *api.Client
	// Bin is the ollama binary that runs.
	Bin string
	// LogPath is the file that receives the server's stdout and stderr.
	LogPath string

	// Durations of StartReal's phases: until GET / answered, and creating
	// the tiny model (upload included).
	StartDuration, CreateDuration time.Duration

	parallel int
	debug    bool
	t        testing.TB
	cmd      *exec.Cmd
	exited   chan struct{} // closed once cmd.Wait returned
	waitErr  error         // set before exited is closed
	killOnce sync.Once
}

// ErrNoOllama is the reason StartReal skips when no binary is found.
var ErrNoOllama = errors.New("no ollama binary: set BULKHEAD_OLLAMA_BIN or run scripts/ollama-build.sh")

// FindOllama returns the ollama binary the integration tests use:
// $BULKHEAD_OLLAMA_BIN, else `ollama` on $PATH, else the one built by
// scripts/ollama-build.sh in $HOME/.cache/bulkhead, else /root/go/bin/ollama
// (a plain `go install github.com/ollama/ollama@...` as root).
func FindOllama() (string, error) {
	if bin := os.Getenv("BULKHEAD_OLLAMA_BIN"); bin != "" {
		if err := checkExecutable(bin); err != nil {
			return "", fmt.Errorf("BULKHEAD_OLLAMA_BIN: %w", err)
		}
		return bin, nil
	}
	if bin, err := exec.LookPath("ollama"); err == nil {
		return bin, nil
	}
	var candidates []string
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".cache", "bulkhead", "ollama-"+OllamaVersion, "bin", "ollama"))
	}
	candidates = append(candidates, "/root/go/bin/ollama")
	for _, bin := range candidates {
		if checkExecutable(bin) == nil {
			return bin, nil
		}
	}
	return "", ErrNoOllama
}

func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

// StartReal starts `ollama serve` on a free loopback port, with its own
// models directory and HOME, waits until it answers and creates the tiny
// model (see WriteTinyGGUF) as r.Model. Everything is torn down by
// t.Cleanup; on failure the tail of the server log is logged.
//
// Without an ollama binary the test is skipped, unless BULKHEAD_INTEGRATION=1
// in which case it fails.
func StartReal(t testing.TB) *Real { return StartRealWith(t, RealOptions{}) }

// RealOptions tune StartRealWith.
type RealOptions struct {
	// Parallel is the server's OLLAMA_NUM_PARALLEL (0: 1): each slot keeps
	// a prompt prefix cached of its own.
	Parallel int
	// Params are the tiny model's parameters over TinyParameters (a longer
	// num_predict, say, so that a plan can finish).
	Params map[string]any
	// Tools gives the model TinyToolsTemplate: Ollama reports it can
	// call tools, so it can serve an app's spoke.
	Tools bool
	// Debug runs the server with OLLAMA_DEBUG=1: its log (LogPath) then
	// says which cache slot each request took and how much of its prompt
	// it found there.
	Debug bool
}

// StartRealWith is StartReal with options.
func StartRealWith(t testing.TB, opts RealOptions) *Real {
	t.Helper()
	bin, err := FindOllama()
	switch {
	case errors.Is(err, ErrNoOllama) && os.Getenv("BULKHEAD_INTEGRATION") != "1":
		t.Skip(err)
	case err != nil: // also a broken BULKHEAD_OLLAMA_BIN: never skip that
		t.Fatalf("%v (BULKHEAD_INTEGRATION=%q)", err, os.Getenv("BULKHEAD_INTEGRATION"))
	}

	becomeSubreaper()
	dir := t.TempDir()
	r := &Real{
		parallel: max(opts.Parallel, 1),
		debug:    opts.Debug,
		Model:    "tiny",
		Bin:      bin,
		LogPath:  filepath.Join(dir, "ollama-serve.log"),
		t:        t,
	}
	// Registered before the process cleanup, so it runs after the server is
	// gone and its log complete (cleanups run last-in first-out).
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("ollama serve log (%s), tail:\n%s", r.LogPath, r.LogTail(16<<10))
		}
	})

	t.Cleanup(r.Kill)

	start := time.Now()
	// The port comes from a listener that is closed before ollama binds it;
	// should another process take it in between, try again on a new one.
	const attempts = 3
	for i := 1; ; i++ {
		err := r.start(dir)
		if err == nil {
			break
		}
		if i < attempts && strings.Contains(r.LogTail(4<<10), "address already in use") {
			t.Logf("ollama serve: %v; retrying on another port", err)
			continue
		}
		t.Fatalf("ollama serve (%s): %v", bin, err)
	}
	r.StartDuration = time.Since(start)

	start = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), realCreateTimeout)
	defer cancel()
	var params map[string]any
	if opts.Params != nil {
		params = maps.Clone(TinyParameters)
		maps.Copy(params, opts.Params)
	}
	if err := CreateTiny(ctx, r.Client, r.Model, filepath.Join(dir, "tiny.gguf"), params); err != nil {
		t.Fatalf("create tiny model: %v", err)
	}
	if opts.Tools {
		// The same model with a template that takes tools, so Ollama says
		// it can call them (the calls it makes are noise).
		if err := r.Client.Create(ctx, &api.CreateRequest{Model: r.Model, From: r.Model, Template: TinyToolsTemplate, Parameters: params}, func(api.ProgressResponse) error { return nil }); err != nil {
			t.Fatalf("create tiny model with tools: %v", err)
		}
	}
	r.CreateDuration = time.Since(start)
	version, err := r.Client.Version(ctx)
	if err != nil {
		version = fmt.Sprintf("unknown (%v)", err)
	}
	t.Logf("ollama serve %s (%s) at %s: started in %v, model %q created in %v",
		version, bin, r.Host, r.StartDuration.Round(time.Millisecond), r.Model, r.CreateDuration.Round(time.Millisecond))
	return r
}

// childEnv is the environment of `ollama serve`: the test's environment
// without any OLLAMA_* setting of the developer's, plus ours.
func childEnv(home, models, hostport string, parallel int, debug bool) []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OLLAMA_") || k == "HOME" || k == "GIN_MODE" {
			continue
		}
		env = append(env, kv)
	}
	if debug {
		env = append(env, "OLLAMA_DEBUG=1")
	}
	return append(env,
		"HOME="+home,
		"OLLAMA_HOST="+hostport,
		"OLLAMA_MODELS="+models,
		fmt.Sprintf("OLLAMA_NUM_PARALLEL=%d", max(parallel, 1)),
		"OLLAMA_MAX_LOADED_MODELS=1",
		"OLLAMA_KEEP_ALIVE=1h",
		"OLLAMA_NOPRUNE=1",
		"OLLAMA_NO_CLOUD=1",
		"OLLAMA_ORIGINS=*",
		"GIN_MODE=release",
	)
}

// start runs `ollama serve` once and waits until GET / answers.
func (r *Real) start(dir string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	hostport := net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	r.Host = "http://" + hostport
	u, err := url.Parse(r.Host)
	if err != nil {
		return err
	}
	r.Client = api.NewClient(u, &http.Client{Transport: &http.Transport{Proxy: nil}})

	home, models := filepath.Join(dir, "home"), filepath.Join(dir, "models")
	for _, d := range []string{home, models} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	logf, err := os.OpenFile(r.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own descriptor

	cmd := exec.Command(r.Bin, "serve")
	cmd.Dir = dir
	cmd.Env = childEnv(home, models, hostport, r.parallel, r.debug)
	cmd.Stdout, cmd.Stderr = logf, logf
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	r.cmd = cmd
	r.exited = make(chan struct{})
	r.killOnce = sync.Once{}
	go func(exited chan struct{}) {
		r.waitErr = cmd.Wait()
		close(exited)
	}(r.exited)

	deadline := time.Now().Add(realStartTimeout)
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil}}
	for {
		select {
		case <-r.exited:
			return fmt.Errorf("exited before answering: %v", r.waitErr)
		default:
		}
		if resp, err := hc.Get(r.Host + "/"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			r.Kill()
			return fmt.Errorf("no answer on %s/ within %v", r.Host, realStartTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// CreateTiny writes the tiny GGUF to path, uploads it as a blob and creates
// the model name from it with TinyTemplate and params (nil: TinyParameters).
func CreateTiny(ctx context.Context, c *api.Client, name, path string, params map[string]any) error {
	if err := WriteTinyGGUF(path); err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	if err := c.CreateBlob(ctx, digest, bytes.NewReader(data)); err != nil {
		return fmt.Errorf("upload blob: %w", err)
	}
	if params == nil {
		params = TinyParameters
	}
	var last string
	err = c.Create(ctx, &api.CreateRequest{
		Model:      name,
		Files:      map[string]string{"tiny.gguf": digest},
		Template:   TinyTemplate,
		Parameters: params,
	}, func(p api.ProgressResponse) error {
		last = p.Status
		return nil
	})
	if err != nil {
		return err
	}
	if last != "success" {
		return fmt.Errorf("create ended with status %q", last)
	}
	return nil
}

// Kill kills the server (and its runner) with SIGKILL now and waits until
// it is gone, e.g. to cut a streamed answer mid-way. It is safe to call more
// than once; later calls do nothing.
func (r *Real) Kill() {
	if r.cmd == nil {
		return
	}
	r.killOnce.Do(func() {
		if err := killProcessGroup(r.cmd); err != nil {
			r.t.Logf("kill ollama serve: %v", err)
		}
		select {
		case <-r.exited:
			// The runners `ollama serve` started are in its process group.
			reapGroup(r.cmd.Process.Pid, realKillTimeout)
		case <-time.After(realKillTimeout):
			r.t.Errorf("ollama serve (pid %d) still running %v after SIGKILL", r.cmd.Process.Pid, realKillTimeout)
		}
	})
}

// Exited reports whether the server process has exited.
func (r *Real) Exited() bool {
	select {
	case <-r.exited:
		return true
	default:
		return false
	}
}

// LogTail returns at most the last n bytes of the server log.
func (r *Real) LogTail(n int64) string {
	f, err := os.Open(r.LogPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	off := max(fi.Size()-n, 0)
	b, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return fmt.Sprintf("(reading log: %v)", err)
	}
	return string(b)
}

// CreateVariant creates another model from the tiny one with other default
// parameters (for example a large num_predict, so that an answer is still
// streaming when the server is killed).
func (r *Real) CreateVariant(name string, params map[string]any) error {
	ctx, cancel := context.WithTimeout(context.Background(), realCreateTimeout)
	defer cancel()
	merged := map[string]any{}
	for k, v := range TinyParameters {
		merged[k] = v
	}
	for k, v := range params {
		merged[k] = v
	}
	return r.Client.Create(ctx, &api.CreateRequest{Model: name, From: r.Model, Template: TinyTemplate, Parameters: merged}, func(api.ProgressResponse) error { return nil })
}
