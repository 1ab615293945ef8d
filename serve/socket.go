package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
)

// SocketName is the serving process's socket in the data directory.
const SocketName = "bulkhead.sock"

// SocketPath is the socket of a data directory.
func SocketPath(dataDir string) string { return filepath.Join(dataDir, SocketName) }

// maxSockPath is the longest path a unix socket address takes (108 bytes
// with its terminating NUL on Linux, fewer elsewhere).
const maxSockPath = 100

// sockAddr is an address for path that fits a socket address: path
// itself, or for a long one the path through an open descriptor of its
// folder (/proc/self/fd/N/NAME); release closes that descriptor.
func sockAddr(path string) (addr string, release func(), err error) {
	if len(path) < maxSockPath {
		return path, func() {}, nil
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return "", nil, err
	}
	addr = fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path))
	if len(addr) >= maxSockPath {
		dir.Close()
		return "", nil, fmt.Errorf("socket path too long: %s", path)
	}
	return addr, func() { dir.Close() }, nil
}

// listen listens on path, a socket only its owner may open (0600, in the
// data directory, itself 0700).
func listen(path string) (net.Listener, error) {
	addr, release, err := sockAddr(path)
	if err != nil {
		return nil, err
	}
	defer release()
	ln, err := net.Listen("unix", addr)
	if err != nil {
		return nil, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// dialDir connects to the socket of the data directory at path, once
// the folder and the socket are checked to be the user's (openDataDir).
func dialDir(path string) (net.Conn, error) {
	d, err := openDataDir(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	addr, err := d.socket()
	if err != nil {
		return nil, err
	}
	return net.Dial("unix", addr)
}

// Keys are what a serving process runs with, key by key (a short hash
// of each value): the configuration's settings (engine.Settings) —
// less what each session chooses for itself (its folder, apps, models
// and Ollama host: Session) and what only a client shows (theme, mouse,
// line mode) — and whether it is the --vanilla baseline. A client and a
// serving process agree on the data directory's meaning only when their
// keys match; when they do not, the keys that differ are named.
func Keys(cfg config.Config, vanilla bool) map[string]string {
	out := map[string]string{}
	for k, v := range engine.Settings(cfg) {
		out[k] = hashOf(v)
	}
	out["vanilla"] = hashOf(vanilla)
	return out
}

// Fingerprint is Keys in one hash.
func Fingerprint(cfg config.Config, vanilla bool) string {
	return FingerprintOf(Keys(cfg, vanilla))
}

// FingerprintOf is keys in one hash.
func FingerprintOf(keys map[string]string) string {
	names := slices.Sorted(maps.Keys(keys))
	h := sha256.New()
	for _, k := range names {
		fmt.Fprintf(h, "%s=%s\n", k, keys[k])
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

func hashOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "unprintable:" + err.Error()
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// Differ names the keys whose values differ between a and b, sorted.
func Differ(a, b map[string]string) []string {
	var out []string
	for k := range a {
		if a[k] != b[k] {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Session is what a client of cfg runs with in its session: its folder
// and apps, and its models and Ollama host. Apps that cfg took from the
// config file (or its default), not from --apps or $BULKHEAD_ENABLE,
// follow the file's enable list while the session runs
// (engine.ProfileSpec.Configured).
func Session(cfg config.Config) (engine.ProfileSpec, engine.Models) {
	return engine.ProfileSpec{Workspace: cfg.Workspace, Enable: cfg.Enable, Configured: configured(cfg.From["enable"])},
		engine.Models{Hub: cfg.Hub.Model, Spoke: cfg.Spokes.Model, Host: cfg.Ollama.Host}
}

// configured says whether a value from src (config.Config.From) is the
// config file's or its default: not a flag's ("--apps") nor the
// environment's ("$BULKHEAD_ENABLE"); "" (a Config not loaded from
// its sources) is none of them.
func configured(src string) bool {
	return src != "" && !strings.HasPrefix(src, "--") && !strings.HasPrefix(src, "$")
}
