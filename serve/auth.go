package serve

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/bulkhead-dev/bulkhead/internal/datadir"
)

// Who speaks for the user (docs/architecture.md). The socket is the
// user's alone (SO_PEERCRED), but every app bulkhead runs has the user's
// uid too; what an app never has is the data directory, which its
// sandbox does not grant. So a client proves it can read a secret there:
//
//   - the serving process writes a fresh key, KeyName in the data
//     directory (0600), each time it starts, before it listens;
//   - hello carries the client's nonce; the serving process answers with
//     its own and a proof that it knows the key, HMAC(key, server,
//     client nonce, server nonce), which the client checks before it
//     says anything of the user's;
//   - the client answers with HMAC(key, client, server nonce, client
//     nonce); the serving process checks it in constant time, and only
//     then is the connection a session.
//
// Neither side sends the key, and neither proof can be replayed: each
// covers the other side's fresh nonce. A process that cannot read the
// data directory gets no session; one that can is the user.

// KeyName is the serving process's key in the data directory.
const KeyName = "serve.key"

const (
	keySize    = 32
	nonceSize  = 32
	proofLabel = "bulkhead serve handshake v1"
)

// newKey writes a fresh key into the data directory dir (rotated at each
// start of a serving process) and returns it.
func newKey(dir string) ([]byte, error) {
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := writeKey(dir, key); err != nil {
		return nil, fmt.Errorf("write the serving key: %w", err)
	}
	return key, nil
}

// writeKey puts key in place whole: a temporary file of mode 0600,
// synced, renamed over the old key.
func writeKey(dir string, key []byte) error {
	tmp, err := os.CreateTemp(dir, ".serve.key-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(key)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, KeyName))
}

// proof is side's HMAC over the two nonces, in the order that side
// puts them.
func proof(key []byte, side string, first, second []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(proofLabel))
	m.Write([]byte{0})
	m.Write([]byte(side))
	m.Write([]byte{0})
	m.Write(first)
	m.Write(second)
	return hex.EncodeToString(m.Sum(nil))
}

// proofOK compares a proof with the expected one in constant time.
func proofOK(got, want string) bool {
	g, err1 := hex.DecodeString(got)
	w, err2 := hex.DecodeString(want)
	return err1 == nil && err2 == nil && hmac.Equal(g, w)
}

func nonce() []byte {
	b := make([]byte, nonceSize)
	_, _ = rand.Read(b)
	return b
}

// ErrUnsafeDir is matched by the error a client gives for a data
// directory that is not safely the user's (another owner, or writable by
// others): it does not connect there, nor start a serving process.
var ErrUnsafeDir = datadir.ErrUnsafe

// ErrNotOurs is matched by the error a client gives when what listens on
// the socket cannot show it knows the data directory's key.
var ErrNotOurs = errors.New("the process on the socket is not your bulkhead")

// dataDir is a data directory opened and checked: the user's, writable by
// no one else. Everything the client does there goes through the open
// folder, so a folder swapped in under the same name afterwards is not
// used.
type dataDir struct {
	path string
	f    *os.File
}

// openDataDir opens and checks the data directory (datadir.Open).
func openDataDir(path string) (*dataDir, error) {
	f, err := datadir.Open(path)
	if err != nil {
		return nil, err
	}
	return &dataDir{path: path, f: f}, nil
}

func (d *dataDir) Close() error { return d.f.Close() }

// at is the path of name in the open folder, for calls that take a path.
func (d *dataDir) at(name string) string { return fmt.Sprintf("/proc/self/fd/%d/%s", d.f.Fd(), name) }

// socket checks that the socket in the folder is a socket of the user's,
// and returns the address to dial.
func (d *dataDir) socket() (string, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.f.Fd()), SocketName, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return "", &fs.PathError{Op: "stat", Path: filepath.Join(d.path, SocketName), Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return "", fmt.Errorf("%w: %s is not a socket", ErrUnsafeDir, filepath.Join(d.path, SocketName))
	}
	if int(st.Uid) != os.Getuid() {
		return "", fmt.Errorf("%w: %s belongs to %s, not to you", ErrUnsafeDir, filepath.Join(d.path, SocketName), datadir.Owner(st.Uid))
	}
	return d.at(SocketName), nil
}

// key reads the serving process's key: a file of the user's, 0600.
func (d *dataDir) key() ([]byte, error) {
	fd, err := unix.Openat(int(d.f.Fd()), KeyName, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: filepath.Join(d.path, KeyName), Err: err}
	}
	f := os.NewFile(uintptr(fd), KeyName)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if int(st.Uid) != os.Getuid() || st.Mode&0o077 != 0 || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%w: %s is not a file of yours alone (owner %s, mode %04o)", ErrUnsafeDir, filepath.Join(d.path, KeyName), datadir.Owner(st.Uid), st.Mode&0o7777)
	}
	key, err := io.ReadAll(io.LimitReader(f, keySize+1))
	if err != nil {
		return nil, err
	}
	if len(key) != keySize {
		return nil, fmt.Errorf("%s: not a serving key", filepath.Join(d.path, KeyName))
	}
	return key, nil
}
