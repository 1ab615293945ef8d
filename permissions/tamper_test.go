package permissions_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// TestTamper edits a stored grant's bytes the way someone with write access
// to the store would, so that the edited grant would decide the request;
// a new Broker must ignore it, ask, and report it.
func TestTamper(t *testing.T) {
	t.Parallel()
	calendar := execNotes
	calendar.Object = "calendar"
	network := permissions.Request{Kind: permissions.KindNetwork, Subject: "hub", Object: "notes", Warning: "network"}
	tests := []struct {
		name    string
		answer  permissions.Decision // what made the grant, for execNotes
		edit    func(g map[string]any)
		r       permissions.Request // what the edited grant would decide
		advance time.Duration
		allowed bool // what the edited grant would say
	}{
		{"untouched (control)", permissions.Decision{Answer: permissions.AnswerPermanent}, func(map[string]any) {}, execNotes, 0, true},
		{"object widened", permissions.Decision{Answer: permissions.AnswerPermanent}, func(g map[string]any) { g["object"] = "calendar" }, calendar, 0, true},
		{"kind changed", permissions.Decision{Answer: permissions.AnswerPermanent}, func(g map[string]any) { g["kind"] = "network" }, network, 0, true},
		{"expiry lifted", permissions.Decision{Answer: permissions.AnswerPermanent, Caveats: permissions.Caveats{Expires: newClock().Now().Add(time.Minute)}},
			func(g map[string]any) { delete(g["caveats"].(map[string]any), "expires") }, execNotes, time.Hour, true},
		{"uses raised", permissions.Decision{Answer: permissions.AnswerPermanent, Caveats: permissions.Caveats{UsesLeft: 1}},
			func(g map[string]any) { g["caveats"].(map[string]any)["uses_left"] = 100 }, execNotes, 0, true},
		{"arg constraint dropped", permissions.Decision{Answer: permissions.AnswerPermanent, Caveats: permissions.Caveats{Args: map[string]string{"q": "x"}}},
			func(g map[string]any) { delete(g["caveats"].(map[string]any), "args") }, execNotes, 0, true},
		{"deny turned to allow", permissions.Decision{Answer: permissions.AnswerDeny, Permanent: true},
			func(g map[string]any) { delete(g, "deny") }, execNotes, 0, true},
		{"signature swapped", permissions.Decision{Answer: permissions.AnswerPermanent},
			func(g map[string]any) { g["sig"] = strings.Repeat("0", 64) }, execNotes, 0, true},
		{"garbage", permissions.Decision{Answer: permissions.AnswerPermanent}, nil, execNotes, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			p := permissionstest.NewPrompter(permissions.AnswerOnce)
			p.Script(tt.answer)
			id := mustRequest(t, e.broker(t, p), execNotes).GrantID
			key := "grants/" + id
			raw, err := e.kv.Get(key)
			if err != nil {
				t.Fatal(err)
			}
			if tt.edit == nil {
				raw = []byte("{not json")
			} else {
				var g map[string]any
				if err := json.Unmarshal(raw, &g); err != nil {
					t.Fatal(err)
				}
				tt.edit(g)
				if raw, err = json.Marshal(g); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.kv.Set(key, raw); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(tt.advance)

			p2 := permissionstest.NewPrompter(permissions.AnswerOnce)
			b := e.broker(t, p2)
			d := mustRequest(t, b, tt.r)
			control := tt.name == "untouched (control)"
			if control {
				if d.Source != permissions.SourceGrant {
					t.Fatalf("untouched grant not used: %+v", d)
				}
				return
			}
			if d.Source != permissions.SourceUser || len(p2.Calls()) != 1 {
				t.Errorf("tampered grant decided: %+v (prompter calls %d), want the user asked", d, len(p2.Calls()))
			}
			invalid := b.Invalid()
			if len(invalid) != 1 || invalid[0].ID != id || !invalid[0].Invalid {
				t.Fatalf("Invalid() = %+v, want grant %s", invalid, id)
			}
			var shown bool
			for _, g := range b.Grants() {
				shown = shown || (g.ID == id && g.Invalid)
			}
			if !shown {
				t.Errorf("Grants() = %+v, want %s flagged invalid", b.Grants(), id)
			}
			if err := b.Revoke(id); err != nil {
				t.Errorf("Revoke(invalid): %v", err)
			}
			if _, err := e.kv.Get(key); !errors.Is(err, permissionstest.ErrNotFound) {
				t.Errorf("revoked invalid grant still stored: %v", err)
			}
		})
	}
}

// TestGrantMovedToAnotherKey: a valid grant copied under another id is not
// taken for a grant of that id.
func TestGrantMovedToAnotherKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := permissionstest.NewPrompter(permissions.AnswerPermanent)
	id := mustRequest(t, e.broker(t, p), execNotes).GrantID
	raw, _ := e.kv.Get("grants/" + id)
	_ = e.kv.Delete("grants/" + id)
	_ = e.kv.Set("grants/other", raw)
	b := e.broker(t, p)
	if d := mustRequest(t, b, execNotes); d.Source != permissions.SourceUser {
		t.Errorf("moved grant decided: %+v", d)
	}
	if len(b.Invalid()) != 1 {
		t.Errorf("Invalid() = %+v, want the moved grant", b.Invalid())
	}
}

func TestKeyFile(t *testing.T) {
	t.Parallel()
	t.Run("created 0600", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.broker(t, nil)
		fi, err := os.Stat(e.keyFile)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
			t.Errorf("key file mode %04o size %d, want 0600 and 32 bytes", fi.Mode().Perm(), fi.Size())
		}
		if dir, _ := os.Stat(filepath.Dir(e.keyFile)); dir.Mode().Perm() != 0o700 {
			t.Errorf("key directory mode %04o, want 0700", dir.Mode().Perm())
		}
		entries, _ := os.ReadDir(filepath.Dir(e.keyFile))
		if len(entries) != 1 {
			t.Errorf("key directory holds %d files, want just the key", len(entries))
		}
	})
	for _, mode := range []os.FileMode{0o644, 0o640, 0o602} {
		t.Run("refused "+mode.String(), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.broker(t, nil)
			if err := os.Chmod(e.keyFile, mode); err != nil {
				t.Fatal(err)
			}
			_, err := permissions.NewBroker(e.options(nil))
			if !errors.Is(err, permissions.ErrKeyMode) || !strings.Contains(err.Error(), e.keyFile) {
				t.Errorf("NewBroker with key mode %04o: %v, want ErrKeyMode naming the file", mode, err)
			}
		})
	}
	t.Run("damaged", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		if err := os.MkdirAll(filepath.Dir(e.keyFile), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(e.keyFile, []byte("short"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := permissions.NewBroker(e.options(nil)); err == nil || !strings.Contains(err.Error(), "damaged") {
			t.Errorf("NewBroker with a 5-byte key: %v, want an error", err)
		}
	})
	t.Run("store needs a key", func(t *testing.T) {
		t.Parallel()
		o := newEnv(t).options(nil)
		o.KeyFile = ""
		if _, err := permissions.NewBroker(o); err == nil {
			t.Error("NewBroker with a Store and no KeyFile succeeded")
		}
	})
	t.Run("another key", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		p := permissionstest.NewPrompter(permissions.AnswerPermanent)
		mustRequest(t, e.broker(t, p), execNotes)
		e.keyFile = filepath.Join(t.TempDir(), "other.key")
		b := e.broker(t, p)
		if d := mustRequest(t, b, execNotes); d.Source != permissions.SourceUser {
			t.Errorf("grant signed with another key decided: %+v", d)
		}
		if len(b.Invalid()) != 1 {
			t.Errorf("Invalid() = %+v, want one", b.Invalid())
		}
	})
}
