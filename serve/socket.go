package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"

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

// Fingerprint identifies what a serving process runs with: the
// configuration less what only a client shows (theme, mouse), where
// values came from, and what each session chooses for itself (its
// folder, its apps and its models: Session), and whether it is the
// --vanilla baseline. A client and a serving process agree on the data
// directory's meaning only when their fingerprints match.
func Fingerprint(cfg config.Config, vanilla bool) string {
	cfg.File, cfg.From, cfg.Theme, cfg.Mouse = "", nil, "", false
	cfg.Workspace, cfg.Enable, cfg.Hub.Model, cfg.Spokes.Model = "", nil, "", ""
	b, err := json.Marshal(struct {
		Config  config.Config
		Vanilla bool
	}{cfg, vanilla})
	if err != nil {
		return "unprintable:" + err.Error()
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Session is what a client of cfg runs with in its session: its folder
// and apps, and its models.
func Session(cfg config.Config) (engine.ProfileSpec, engine.Models) {
	return engine.ProfileSpec{Workspace: cfg.Workspace, Enable: cfg.Enable}, engine.Models{Hub: cfg.Hub.Model, Spoke: cfg.Spokes.Model}
}
