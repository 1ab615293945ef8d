// Package notes is the built-in notes app: short notes with a title and a
// body, kept in the app's own memory namespace (apps.Call.Memory) and
// nowhere else.
//
// Each note is stored as JSON under "note/<id>", where id is a decimal
// number drawn from a counter under "seq", so ids are short, never reused
// and sort in the order the notes were added.
//
// An App keeps no state of its own; all of it lives in the memory it is
// handed, so an App is safe for concurrent use as far as that memory is.
// Adds are serialised in the process, and an id already taken is
// skipped, so notes added at once from several chats (whose spokes share
// the app's memory) keep distinct ids.
package notes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
)

const (
	notePrefix = "note/"
	seqKey     = "seq"
	maxTitle   = 200
	maxBody    = 64 << 10
	maxResults = 100
)

var idPattern = regexp.MustCompile(`^[1-9][0-9]{0,17}$`)

// App is the notes app.
type App struct {
	man apps.Manifest
}

var _ apps.App = (*App)(nil)

// New returns the notes app.
func New() *App { return &App{man: manifest()} }

// Manifest declares the app.
func (a *App) Manifest() apps.Manifest { return a.man }

// Note is one saved note as stored and returned.
type Note struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Body    string `json:"body"`
	Created string `json:"created,omitempty"` // RFC 3339, UTC
}

type noteList struct {
	Notes     []Note `json:"notes"`
	Truncated bool   `json:"truncated"`
}

// Call runs one function.
func (a *App) Call(ctx context.Context, c apps.Call) (json.RawMessage, error) {
	return apps.Dispatch(ctx, a.man, handlers, c)
}

// handlers are the notes functions, each over the caller's own namespace.
var handlers = map[string]apps.Handler{
	"add": withStore(func(_ context.Context, s store, p struct{ Title, Body string }) (any, error) {
		return s.add(p.Title, p.Body)
	}),
	"search": withStore(func(ctx context.Context, s store, p struct{ Query string }) (any, error) {
		return s.search(ctx, p.Query)
	}),
	"list":   withStore(func(ctx context.Context, s store, _ struct{}) (any, error) { return s.search(ctx, "") }),
	"read":   withStore(func(_ context.Context, s store, p struct{ ID string }) (any, error) { return s.read(p.ID) }),
	"delete": withStore(func(_ context.Context, s store, p struct{ ID string }) (any, error) { return s.delete(p.ID) }),
}

// withStore hands a notes function the store over the call's namespace.
func withStore[P any](fn func(ctx context.Context, s store, p P) (any, error)) apps.Handler {
	return apps.Typed(func(ctx context.Context, c apps.Call, p P) (any, error) {
		if c.Memory == nil {
			return nil, errors.New("notes has no memory to keep notes in")
		}
		return fn(ctx, store{kv: c.Memory, notFound: c.NotFound}, p)
	})
}

// store is the notes kept in one memory namespace.
type store struct {
	kv       apps.KV
	notFound error
}

func (s store) add(title, body string) (map[string]string, error) {
	title = strings.TrimSpace(title)
	switch {
	case title == "":
		return nil, errors.New("the note needs a title")
	case len(title) > maxTitle:
		return nil, fmt.Errorf("the title is longer than %d bytes", maxTitle)
	case len(body) > maxBody:
		return nil, fmt.Errorf("the body is longer than %d KiB", maxBody>>10)
	}
	// Drawing an id and saving the note are one step: two chats' spokes
	// adding at once (they share the app's memory) must not draw the same
	// id and lose a note.
	addMu.Lock()
	defer addMu.Unlock()
	id, err := s.nextID()
	if err != nil {
		return nil, err
	}
	n := Note{ID: id, Title: title, Body: body, Created: time.Now().UTC().Format(time.RFC3339)}
	b, err := json.Marshal(n)
	if err != nil {
		return nil, err
	}
	if err := s.kv.Set(notePrefix+id, b); err != nil {
		return nil, fmt.Errorf("save the note: %w", err)
	}
	return map[string]string{"id": id}, nil
}

// addMu makes drawing an id and saving its note one step in this process
// (the one process that owns the data directory).
var addMu sync.Mutex

// nextID draws the next id from the counter, past any id already taken
// (a counter written back by an older process).
func (s store) nextID() (string, error) {
	var n uint64
	b, err := s.kv.Get(seqKey)
	switch {
	case err == nil:
		if n, err = strconv.ParseUint(string(b), 10, 63); err != nil {
			return "", fmt.Errorf("the note counter is damaged: %q", b)
		}
	case s.missing(err):
	default:
		return "", fmt.Errorf("read the note counter: %w", err)
	}
	n++
	for {
		_, err := s.kv.Get(notePrefix + strconv.FormatUint(n, 10))
		if s.missing(err) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("read note %d: %w", n, err)
		}
		n++
	}
	id := strconv.FormatUint(n, 10)
	if err := s.kv.Set(seqKey, []byte(id)); err != nil {
		return "", fmt.Errorf("save the note counter: %w", err)
	}
	return id, nil
}

func (s store) missing(err error) bool {
	return s.notFound != nil && errors.Is(err, s.notFound)
}

func (s store) read(id string) (Note, error) {
	if !idPattern.MatchString(id) {
		return Note{}, fmt.Errorf("no note %q", id)
	}
	b, err := s.kv.Get(notePrefix + id)
	if s.missing(err) {
		return Note{}, fmt.Errorf("no note %q", id)
	}
	if err != nil {
		return Note{}, fmt.Errorf("read note %q: %w", id, err)
	}
	var n Note
	if err := json.Unmarshal(b, &n); err != nil {
		return Note{}, fmt.Errorf("note %q is damaged", id)
	}
	n.ID = id
	return n, nil
}

func (s store) delete(id string) (map[string]bool, error) {
	if _, err := s.read(id); err != nil {
		return nil, err
	}
	if err := s.kv.Delete(notePrefix + id); err != nil {
		return nil, fmt.Errorf("delete note %q: %w", id, err)
	}
	return map[string]bool{"ok": true}, nil
}

// search returns the notes whose title or body contain every word of
// query, ignoring case, oldest first; an empty query returns every note.
func (s store) search(ctx context.Context, query string) (noteList, error) {
	keys, err := s.kv.Keys(notePrefix)
	if err != nil {
		return noteList{}, fmt.Errorf("list notes: %w", err)
	}
	ids := make([]uint64, 0, len(keys))
	for _, k := range keys {
		if n, err := strconv.ParseUint(strings.TrimPrefix(k, notePrefix), 10, 63); err == nil {
			ids = append(ids, n)
		}
	}
	slices.Sort(ids)
	words := strings.Fields(strings.ToLower(query))
	res := noteList{Notes: []Note{}}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return noteList{}, err
		}
		n, err := s.read(strconv.FormatUint(id, 10))
		if err != nil {
			continue // deleted meanwhile, or damaged: not a match
		}
		if !matches(n, words) {
			continue
		}
		if len(res.Notes) == maxResults {
			res.Truncated = true
			break
		}
		res.Notes = append(res.Notes, n)
	}
	return res, nil
}

func matches(n Note, words []string) bool {
	text := strings.ToLower(n.Title + "\n" + n.Body)
	for _, w := range words {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

// Explain says which note an id denotes, for a dialog about deleting it.
func (a *App) Explain(_ context.Context, c apps.Call) (string, error) {
	if c.Function != "delete" {
		return "", nil
	}
	var p struct{ ID string }
	if err := json.Unmarshal(c.Args, &p); err != nil {
		return "", err
	}
	if c.Memory == nil {
		return "", nil
	}
	n, err := store{kv: c.Memory, notFound: c.NotFound}.read(p.ID)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("note %s is %q (%d characters)", p.ID, n.Title, len(n.Body)), nil
}
