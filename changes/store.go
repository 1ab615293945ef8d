package changes

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// Owner is who a layer's changes are from, and whose turn may decide
// them.
type Owner struct {
	// App is the app whose process writes the layer.
	App string `json:"app"`
	// Chat is the chat whose turn started the process ("" for a process
	// no turn started: a listing at install).
	Chat string `json:"chat,omitempty"`
	// Session is the client session whose turn started it.
	Session string `json:"session,omitempty"`
	// Private: a private turn's; discarded when the turn ends undecided,
	// so that nothing of it is kept.
	Private bool `json:"private,omitempty"`
}

// Layer is one process's layer over one folder.
type Layer struct {
	ID string `json:"id"`
	// Folder is the real folder below the layer: absolute, links
	// resolved when the layer was made.
	Folder  string    `json:"folder"`
	Owner   Owner     `json:"owner"`
	Created time.Time `json:"created"`
	dir     string
}

// Overlay is the layer as the sandbox mounts it.
func (l Layer) Overlay() sandbox.Overlay {
	return sandbox.Overlay{Upper: filepath.Join(l.dir, "upper"), Work: filepath.Join(l.dir, "work")}
}

func (l Layer) upper() string { return filepath.Join(l.dir, "upper") }

// Options tune a Store.
type Options struct {
	// Keep are bulkhead's own files (its config file, where it lies in a
	// folder an app may write): a change to one is warned as such.
	Keep []string
	// Home is the user's home folder: a change in one of its
	// sandbox.HomeTrees is warned as such.
	Home string
}

// Store keeps the layers of one data directory, one folder each under
// its root: layer.json (the Layer), upper/ and work/ (overlayfs's),
// settled.json (what was decided while its process ran).
type Store struct {
	root string
	opts Options
	mu   sync.Mutex
	held map[string]func() // layer → stop the process that has it mounted
}

// Open opens (making it where missing, mode 0700) the store at root.
func Open(root string, opts Options) (*Store, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("the change sets' folder: %w", err)
	}
	var keep []string
	for _, k := range opts.Keep {
		if k == "" {
			continue
		}
		if abs, err := filepath.Abs(k); err == nil {
			if r, err := filepath.EvalSymlinks(abs); err == nil {
				abs = r
			}
			keep = append(keep, abs)
		}
	}
	opts.Keep = keep
	if opts.Home != "" {
		if h, err := filepath.EvalSymlinks(opts.Home); err == nil {
			opts.Home = h
		}
	}
	return &Store{root: root, opts: opts, held: map[string]func(){}}, nil
}

// Root is the folder the layers lie in (bulkhead's: no app is granted
// it).
func (s *Store) Root() string { return s.root }

// New makes an empty layer over folder for o.
func (s *Store) New(o Owner, folder string) (Layer, error) {
	abs, err := filepath.Abs(folder)
	if err != nil {
		return Layer{}, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return Layer{}, fmt.Errorf("a layer over %s: %w", folder, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return Layer{}, err
	}
	if !fi.IsDir() {
		return Layer{}, fmt.Errorf("a layer over %s: not a folder", folder)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	now := time.Now()
	l := Layer{ID: now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:]), Folder: real, Owner: o, Created: now}
	l.dir = filepath.Join(s.root, l.ID)
	if err := os.Mkdir(l.dir, 0o700); err != nil {
		return Layer{}, err
	}
	ov := l.Overlay()
	// The folder's root, as the app sees it, takes the upper folder's
	// mode: the real folder's.
	if err := os.Mkdir(ov.Upper, fi.Mode().Perm()); err == nil {
		err = os.Chmod(ov.Upper, fi.Mode().Perm())
	}
	if err := os.Mkdir(ov.Work, 0o700); err != nil {
		_ = removeAll(l.dir)
		return Layer{}, err
	}
	if err := writeJSON(filepath.Join(l.dir, "layer.json"), l); err != nil {
		_ = removeAll(l.dir)
		return Layer{}, err
	}
	return l, nil
}

// Hold marks l as mounted by a running process; release stops that
// process (and returns when it has ended).
func (s *Store) Hold(id string, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held[id] = release
}

// Release marks l's process as ended: its layer is still until bulkhead
// decides it.
func (s *Store) Release(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.held, id)
}

// Held reports whether a running process has l mounted.
func (s *Store) Held(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.held[id]
	return ok
}

// stop stops the process that holds id, if any, and waits for it.
func (s *Store) stop(id string) {
	s.mu.Lock()
	release := s.held[id]
	delete(s.held, id)
	s.mu.Unlock()
	if release != nil {
		release()
	}
}

// Layers lists the layers on disk, oldest first.
func (s *Store) Layers() ([]Layer, error) {
	ents, err := os.ReadDir(s.root)
	if err != nil {
		return nil, err
	}
	var out []Layer
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		l, err := s.Layer(e.Name())
		if err != nil {
			continue
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b Layer) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// ErrNoLayer is matched by the error for an id the store does not hold.
var ErrNoLayer = errors.New("no such change set")

// Layer is the layer id.
func (s *Store) Layer(id string) (Layer, error) {
	if id == "" || id != filepath.Base(id) || strings.HasPrefix(id, ".") {
		return Layer{}, fmt.Errorf("%w: %q", ErrNoLayer, id)
	}
	var l Layer
	b, err := os.ReadFile(filepath.Join(s.root, id, "layer.json"))
	if err != nil {
		return Layer{}, fmt.Errorf("%w: %s", ErrNoLayer, id)
	}
	if err := json.Unmarshal(b, &l); err != nil || l.ID != id {
		return Layer{}, fmt.Errorf("%w: %s (unreadable)", ErrNoLayer, id)
	}
	l.dir = filepath.Join(s.root, id)
	return l, nil
}

// Remove discards l whole: the process that holds it is stopped first,
// then its folder is removed.
func (s *Store) Remove(id string) error {
	l, err := s.Layer(id)
	if err != nil {
		return err
	}
	s.stop(id)
	return removeAll(l.dir)
}

// settled are the entries of a held layer decided while its process
// ran: by path, the layer's node as it was then. An entry read again
// with the same node is not asked again.
type settled map[string]fingerprint

func (s *Store) settled(l Layer) settled {
	out := settled{}
	b, err := os.ReadFile(filepath.Join(l.dir, "settled.json"))
	if err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

func (s *Store) settle(l Layer, add settled) error {
	st := s.settled(l)
	for k, v := range add {
		st[k] = v
	}
	return writeJSON(filepath.Join(l.dir, "settled.json"), st)
}

// writeJSON writes v to p atomically, synced.
func writeJSON(p string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, p)
}

// removeAll removes p and what it holds, making a folder the app (or
// overlayfs's work folder) left unreadable readable first.
func removeAll(p string) error {
	err := os.RemoveAll(p)
	if err == nil {
		return nil
	}
	_ = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() || errors.Is(err, fs.ErrPermission) {
			_ = os.Chmod(q, 0o700)
		}
		return nil
	})
	return os.RemoveAll(p)
}

var (
	sharedMu sync.Mutex
	shared   = map[string]*Store{}
)

// Shared is the one Store of root in this process (opened on first
// use): the apps that make layers and the hub that decides them must
// share one, so that a layer's process can be stopped when its set is
// discarded.
func Shared(root string, opts Options) (*Store, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if s, ok := shared[root]; ok {
		return s, nil
	}
	s, err := Open(root, opts)
	if err != nil {
		return nil, err
	}
	shared[root] = s
	return s, nil
}

// Empty reports whether l's layer holds nothing at all (its process
// wrote nothing): such a layer can go without being read.
func (l Layer) Empty() bool {
	f, err := os.Open(l.upper())
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) == 0
}

// Drop removes l where its process wrote nothing; it reports whether it
// did.
func (s *Store) Drop(l Layer) bool {
	if !l.Empty() {
		return false
	}
	s.Release(l.ID)
	return removeAll(l.dir) == nil
}

// Sweep tidies the store when bulkhead starts, before any process holds
// a layer: a private turn's layers go (nothing of a private turn is
// kept, and no process of one runs any more), and so do layers their
// process wrote nothing in. It returns how many went.
func (s *Store) Sweep() int {
	ls, err := s.Layers()
	if err != nil {
		return 0
	}
	n := 0
	for _, l := range ls {
		if s.Held(l.ID) {
			continue
		}
		if l.Owner.Private || l.Empty() {
			if removeAll(l.dir) == nil {
				n++
			}
		}
	}
	// git's views of a read that did not end (git.go)
	views, _ := filepath.Glob(filepath.Join(s.root, ".git-view-*"))
	for _, v := range views {
		_ = os.RemoveAll(v)
	}
	return n
}
