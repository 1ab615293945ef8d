package chats

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/testenv"
	"github.com/bulkhead-dev/bulkhead/tui/style"
)

func TestMain(m *testing.M) { testenv.Main(m, false) }

type fakeBackend []hub.Chat

func (f fakeBackend) Chats() ([]hub.Chat, error) { return f, nil }
func (fakeBackend) DeleteChat(string) error      { return nil }

// A chat of another folder shows its folder, whether selected or not, and
// the selected row is marked ▸, not by colour alone; the filter matches
// folders.
func TestRowsSayTheFolderAndTheSelection(t *testing.T) {
	now := time.Now()
	b := fakeBackend{
		{ID: "1", Title: "here chat", Folder: "/w/projA", Updated: now},
		{ID: "2", Title: "there chat", Folder: "/w/projB", Updated: now.Add(-time.Minute)},
	}
	th := style.New(true)
	d, cmd := New(th, Config{Backend: b, Folder: "/w/projA", Current: "1"})
	d.Update(cmd())
	v := ansi.Strip(d.View(th, 80, 20, now))
	if !strings.Contains(v, "▸● here chat") || !strings.Contains(v, "there chat · in /w/projB") || strings.Contains(v, "▸● here chat ·") {
		t.Fatalf("rows:\n%s", v)
	}
	if got := (chatItem{b[1]}).FilterValue(); !strings.Contains(got, "projB") {
		t.Fatalf("the filter does not match the folder: %q", got)
	}
}
