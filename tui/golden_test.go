package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

var (
	hostPort = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
	randomID = regexp.MustCompile(`\b[0-9a-f]{12}\b`) // grant and request ids
	// A turn's time of day and how long it took change from run to run.
	turnClock   = regexp.MustCompile(`(◆ [^\n]*· )\d\d:\d\d\b`)
	turnElapsed = regexp.MustCompile(`((?:◆|answering|waiting)[^\n]*(?:· |… ))(\d+\.\ds|\d+s|\d+m\d\ds)\b`)
	// The spinner's frame is how many ticks a busy machine let through.
	spinnerFrame = regexp.MustCompile(`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]`)
)

// steady replaces what changes from run to run in a view: the scripted
// server's port, the broker's ids, a turn's clock time and duration.
func steady(v string) string {
	v = hostPort.ReplaceAllString(v, "http://HOST")
	v = randomID.ReplaceAllString(v, "<id>")
	v = turnClock.ReplaceAllString(v, "${1}HH:MM")
	v = spinnerFrame.ReplaceAllString(v, "⠋")
	return turnElapsed.ReplaceAllString(v, "${1}Ns")
}

const markdownAnswer = "## Listing files\n\nUse one of these:\n\n- `ls -la` for details\n- `tree` for a tree\n\n```sh\nls -la /tmp\n```\n\nThat's it."

// scenes build the screens the golden files pin; each returns the driver
// showing the scene.
var scenes = []struct {
	name  string
	build func(t *testing.T, w, h int) *driver
}{
	{"empty", func(t *testing.T, w, h int) *driver {
		r := newRig(t, replies(ollamatest.Text("x")))
		return newDriver(t, r.options(), w, h)
	}},
	{"answer", func(t *testing.T, w, h int) *driver {
		r := newRig(t, replies(ollamatest.Reply{Chunks: []string{markdownAnswer}}))
		d := newDriver(t, r.options(), w, h)
		d.ask("how do I list files?")
		return d
	}},
	{"streaming", func(t *testing.T, w, h int) *driver {
		r := newRig(t, replies(ollamatest.Reply{Chunks: []string{"## Thinking it over\n\n", "The first part ", "of the answer"}, Hang: true}))
		d := newDriver(t, r.options(), w, h)
		d.typeText("explain slowly")
		d.key(keyEnter)
		d.until("of the answer")
		t.Cleanup(func() { d.key(keyEsc); d.idle() })
		return d
	}},
	{"chats", func(t *testing.T, w, h int) *driver {
		r := newRig(t, replies(ollamatest.Text("ok")))
		d := newDriver(t, r.options(), w, h)
		d.ask("plan a trip to Lisbon")
		d.key(ctrl('p'))
		d.ask("a private matter")
		d.key(ctrl('n'))
		d.ask("what is a bulkhead?")
		d.key(ctrl('o'))
		d.idle()
		return d
	}},
	{"pull", func(t *testing.T, w, h int) *driver {
		r := newRig(t, replies(ollamatest.Text("x")), hubModel)
		d := newDriver(t, r.options(), w, h)
		d.ask("hello?")
		return d
	}},
	// A change set's entries' picker (a): framed, the warned entry
	// unticked.
	{"changes_picker", func(t *testing.T, w, h int) *driver {
		d, p := caveatDriver(t, w, h)
		prompt(t, d, p, changesRequest("the shell app's changes", true))
		d.key(char('a'))
		return d
	}},
	// The mail injection's send, the drive request denied by a rule.
	{"irreversible", func(t *testing.T, w, h int) *driver {
		r := newAppRig(t, ollamatest.Gullible(), allowExec, denyCollab)
		d := newDriver(t, r.options(), w, h)
		d.typeText(mailQuery)
		d.key(keyEnter)
		d.until("cannot be undone")
		// Settled: the turn has the request the dialog shows (its
		// activity says it waits for the answer), whichever came first.
		d.untilModel("the turn waiting for the answer", func(m Model) bool { return m.run != nil && m.run.Extras.Asking() > 0 })
		d.untilRaw(1)
		d.graceOver()
		return d
	}},
	// An MCP server's process asks for an endpoint of its config.
	{"network", func(t *testing.T, w, h int) *driver {
		r := newAppRig(t, ridesInTurn())
		d := newDriver(t, r.options(), w, h)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		t.Cleanup(func() {
			cancel()
			<-done
		})
		go func() {
			defer close(done)
			_, _ = r.broker.Request(ctx, permissions.Request{Kind: permissions.KindNetwork, Subject: "fetcher", Object: "api.example.com:443",
				Args:     json.RawMessage(`{"host":"api.example.com","port":"443"}`),
				Detail:   "fetcher's process may connect to api.example.com, port 443, until it stops; its config (mcp.fetcher.net) names this endpoint, and it reaches no other.",
				Warning:  "Network: fetcher could send anything it has read — the folders its config grants, what it was given in this chat — to api.example.com (port 443), and bulkhead cannot see what it sends. Allow it only if fetcher needs that host to work.",
				Concerns: []permissions.Concern{permissions.ConcernNetwork}})
		}()
		d.until("fetcher wants to reach api.example.com, port 443")
		d.untilRaw(1)
		d.graceOver()
		return d
	}},
	{"results", func(t *testing.T, w, h int) *driver {
		r := newAppRig(t, ridesInTurn(), allowExec, allowData)
		d := newDriver(t, r.options(), w, h)
		d.ask(ridesQuery)
		return d
	}},
	// The rides turn in a window opened afterwards (--chat): its calls and
	// decisions and its results card, from the hub's log alone.
	{"reopened", func(t *testing.T, w, h int) *driver {
		r := newAppRig(t, ridesInTurn(), allowExec, allowData)
		first := newDriver(t, r.options(), w, h)
		first.ask(ridesQuery)
		opts := r.options()
		opts.ResumeChat, opts.Prompter = first.model().chat.Chat.ID, nil // (the driver runs a batch in order: a prompter wait first would hold it)
		d := newDriver(t, opts, w, h)
		d.idle()
		return d
	}},
	// A planner whose output is unusable twice: the plain model answers,
	// and the turn says so.
	{"fallback", func(t *testing.T, w, h int) *driver {
		srv := ollamatest.NewScripted(t, func(req *api.ChatRequest) ollamatest.Reply {
			if len(req.Format) > 0 {
				return ollamatest.Text("I think you should use the clock app!")
			}
			return ollamatest.Text("A plain answer.")
		}, hubModel, spokeModel)
		r := newRigAt(t, srv, srv.Host())
		d := newDriver(t, r.options(), w, h)
		d.ask("what time is it?")
		return d
	}},
	// The permission manager over the seeded broker: grants and rules,
	// then the action log.
	{"grants", func(t *testing.T, w, h int) *driver {
		d, _ := managerRig(t, w, h)
		d.key(ctrl('g'))
		d.idle()
		return d
	}},
	{"actionlog", func(t *testing.T, w, h int) *driver {
		d, _ := managerRig(t, w, h)
		d.key(ctrl('g'))
		d.idle()
		d.key(keyTab)
		return d
	}},
	// The dialog's second step after s: 1 hour, 5 uses.
	{"caveats", func(t *testing.T, w, h int) *driver {
		d, p := caveatDriver(t, w, h)
		prompt(t, d, p, draftRequest)
		d.key(char('s'))
		d.key(keyRight)
		d.key(keyDown)
		d.key(keyRight)
		d.key(keyRight)
		return d
	}},
	{"apps", func(t *testing.T, w, h int) *driver {
		d := appsRig(t, w, h, &appSwitch{off: map[string]bool{"creative_muse": true}})
		d.key(ctrl('a'))
		d.idle()
		for range 6 {
			d.key(keyDown) // mail
		}
		return d
	}},
	// The memory screen over seeded memory, mail selected: its summary
	// with a masked span, its entities and the hub's record of it.
	{"memory", func(t *testing.T, w, h int) *driver {
		d, _ := memoryRig(t, w, h)
		d.key(ctrl('e'))
		d.idle()
		d.key(keyDown)
		return d
	}},
	// The slash command menu over a chat, as "/" is typed.
	{"slashmenu", func(t *testing.T, w, h int) *driver {
		r := newRig(t, replies(ollamatest.Text("An answer.")))
		opts := r.options()
		opts.Models = newFakeModels() // /model is offered where models can be switched
		d := newDriver(t, opts, w, h)
		d.ask("hello")
		d.typeText("/")
		return d
	}},
	// The keys dialog (?): at 80×24 taller than the screen, its top with a
	// scroll line; then scrolled to its end.
	{"help", func(t *testing.T, w, h int) *driver {
		r := newRig(t, replies(ollamatest.Text("x")))
		d := newDriver(t, r.options(), w, h)
		d.key(char('?'))
		return d
	}},
	{"help_end", func(t *testing.T, w, h int) *driver {
		r := newRig(t, replies(ollamatest.Text("x")))
		d := newDriver(t, r.options(), w, h)
		d.key(char('?'))
		d.key(keyEnd)
		return d
	}},
	{"vanilla", func(t *testing.T, w, h int) *driver {
		r := newRig(t, replies(ollamatest.Text("One context, every app: nothing is isolated.")))
		opts := r.options()
		opts.Vanilla = true
		d := newDriver(t, opts, w, h)
		d.ask("hello")
		return d
	}},
}

func TestGoldenViews(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, sc := range scenes {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, size[0], size[1]), func(t *testing.T) {
				t.Parallel()
				d := sc.build(t, size[0], size[1])
				golden.RequireEqual(t, steady(d.view()))
			})
		}
	}
}
