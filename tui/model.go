package tui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/list"
	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/sandbox"
	"github.com/bulkhead-dev/bulkhead/tui/chat"
	"github.com/bulkhead-dev/bulkhead/tui/dialogs/chats"
	"github.com/bulkhead-dev/bulkhead/tui/dialogs/help"
	"github.com/bulkhead-dev/bulkhead/tui/dialogs/models"
	"github.com/bulkhead-dev/bulkhead/tui/dialogs/permission"
	"github.com/bulkhead-dev/bulkhead/tui/dialogs/pull"
	appscreen "github.com/bulkhead-dev/bulkhead/tui/screens/apps"
	memscreen "github.com/bulkhead-dev/bulkhead/tui/screens/memory"
	permscreen "github.com/bulkhead-dev/bulkhead/tui/screens/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/setup"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Backend is what the UI needs of the hub (*hub.Operator satisfies it).
type Backend interface {
	NewChat(private bool) (hub.Chat, error)
	Chats() ([]hub.Chat, error)
	Chat(id string) (hub.Chat, error)
	DeleteChat(id string) error
	// TurnsBefore returns up to n turns of a chat with Seq below before
	// (0: the newest), oldest first, and whether older ones remain.
	TurnsBefore(id string, before uint64, n int) ([]hub.Turn, bool, error)
	// AskWith runs a query; AskOptions.Private for /private.
	AskWith(ctx context.Context, chat, query string, opts hub.AskOptions, emit func(hub.Event)) (hub.Turn, error)
	Retry(ctx context.Context, chat string, seq uint64, emit func(hub.Event)) (hub.Turn, error)
	Working() []string
	HubModel() string

	// The memory screen (tui/screens/memory): whose memory there is, what
	// each owner remembers, and forgetting it.
	MemoryOwners() ([]string, error)
	Memory(owner string) (hub.OwnerMemory, error)
	Forget(owner string) error

	// NoteRevealed logs that the user revealed a span the hub masked.
	NoteRevealed(chat string, seq uint64, kind string) error
}

// Ollama is what the UI needs to show the server's state, check the
// configured models and offer a pull (*llm.Client satisfies it).
type Ollama interface {
	Version(ctx context.Context) (string, error)
	Pull(ctx context.Context, model string, fn func(llm.Progress)) error
	HasModel(ctx context.Context, model string) (bool, error)
	Capabilities(ctx context.Context, model string) ([]string, error)
	ModelsThatCan(ctx context.Context, capability string) ([]string, error)
}

// Options configures the UI.
type Options struct {
	Backend    Backend // required
	Ollama     Ollama  // optional: without it there is no Ollama state and no pull
	SpokeModel string  // shown in the status bar with the hub model
	Theme      string  // "auto" (ask the terminal), "dark" or "light"
	Version    string
	ResumeChat string // a chat id to open at start; else a new chat
	Private    bool   // start in a new private chat (unless ResumeChat is set)
	// Prompter, when set, is the broker's Prompter: its requests show as
	// permission dialogs. Give the same one to the engine.
	Prompter *Prompter
	// Vanilla marks the unsafe single-context baseline (--vanilla): the
	// header and the status bar say so.
	Vanilla bool

	// Broker, when set, is the permission broker (*permissions.Broker):
	// the permission manager (ctrl+g, /permissions) lists and revokes its
	// grants and shows its action log; ctrl+y (/trusted) toggles its
	// trusted-session mode.
	Broker Permissions
	// Changes lists and decides the change sets that wait for an answer
	// (the manager's changes tab); *serve.Client satisfies it.
	Changes permscreen.ChangeSets
	// Rules are the config's permission rules, listed by the manager.
	Rules []RuleView
	// DataDir is where the manager exports the action log ("" = the
	// system's temporary folder).
	DataDir string
	// Workspace is the folder this bulkhead works in: the chats list
	// shows the folder of a chat started elsewhere.
	Workspace string
	// Registry is the installed apps, listed by the apps screen (ctrl+a,
	// /apps); *apps.Registry satisfies it.
	Registry Installed
	// Sandbox is what a probe of the sandbox of out-of-process apps found
	// (the serving process's; called off the UI loop); nil: not shown.
	Sandbox func() sandbox.Report
	// Apps enables and disables apps from the apps screen; nil: the toggle
	// says it is not available.
	Apps AppSwitch
	// AppModel names the model an app's spoke uses (nil or "": the
	// manifest's, else SpokeModel).
	AppModel func(app string) string
	// AppModelKey is the config key that gives an app its own model,
	// apps.NAME.model or mcp.NAME.model (nil: apps.NAME.model): the setup
	// panel names it as the fix for that model, which neither --model nor
	// /model changes.
	AppModelKey func(app string) string
	// AppSource is where each MCP app runs: its command line or URL.
	AppSource map[string]string
	// Setup, with Ollama, turns on the setup panel (setup.go): Ollama
	// and the configured models are checked at start and whenever Ollama
	// is found down, and what fails is shown with its fix until it works.
	Setup *Setup
	// Models, when set, lists the installed models and switches the
	// hub's and the spokes' model, remembering the choice for later
	// bulkheads (/model, tui/dialogs/models).
	Models Models
	// Mouse starts with the mouse captured (ui.mouse): the wheel scrolls,
	// and selecting text takes shift+drag. Off, the terminal selects text
	// as anywhere else, and pgup/pgdn scroll. f2 switches.
	Mouse bool
}

// Model is the root Bubble Tea model. Its children are plain structs
// driven by its Update; none of them does IO. Every backend call runs in
// a tea.Cmd, and a running turn or pull runs on a goroutine owned by
// workers, which forwards what happens through a queue that the Cmd
// returned from Update reads.
type Model struct {
	opts Options
	b    Backend
	w    *workers
	keys keyMap
	th   style.Theme
	md   *widget.Markdown

	width, height int

	chat    chat.Pane
	views   int // chat views made so far; names each (chatView.vid)
	input   input
	bar     statusBar
	overlay overlay
	gate    gate          // whether the dialog on top takes answers yet (overlay.go)
	keysAt  help.Dialog   // where the keys dialog is scrolled to (overlay.go)
	list    *chats.Dialog // the chats dialog, while it is open
	pull    *pull.Dialog  // the model-missing dialog (pulling.go)
	pulling *pullRun      // its pull in flight
	notice  string
	// noticeShown and noticeSeq follow the notice for its fade;
	// ruleShown is how many lines the rule took at the last layout.
	noticeShown string
	noticeSeq   int
	ruleShown   int
	setup       setupState // the setup panel (setup.go)

	// The slash command menu (slash.go) and /model's list (tui/dialogs/models).
	menu   slashMenu
	models *models.Dialog

	run     *turnRun
	nextID  int
	frame   int
	ticking bool
	// extras keeps the activity and results of the turns run here, by
	// chat and turn number: the hub's log holds the results, not the
	// activity.
	extras map[string]map[uint64]*chat.Extras
	// kept holds the private queries asked here, by chat (private.go): the
	// hub logs none, so the view keeps them until the UI exits.
	kept map[string][]chat.Kept

	// Permission dialogs (tui/dialogs/permission, permit.go).
	prompter *Prompter
	pseen    uint64             // the Prompter's version last handed over
	prompts  []permission.Ask   // its queue as of pseen, answered ones left out
	gone     map[uint64]bool    // answered here, maybe not yet out of a snapshot
	perm     *permission.Dialog // the dialog showing, if any
	under    overlay            // the overlay it covers, restored when it closes

	// Full screens (screen.go): the permission manager, the apps and
	// the memory screen.
	mgr     *permscreen.Screen
	appsv   *appscreen.Screen
	memv    *memscreen.Screen
	trusted bool // the broker's trusted-session mode, as last seen
	mouse   bool // the mouse is captured (wheel events), f2 switches

	// after schedules msg after d; nil turns timers off (tests).
	after func(d time.Duration, msg tea.Msg) tea.Cmd
	now   func() time.Time
	// throttle is the least time between renderings of a streaming
	// answer; 0 renders on every batch of tokens (tests, which have no
	// spinner tick to catch up).
	throttle time.Duration
}

// New builds the root model; Options.Backend must be set. It does no IO:
// Init returns the first Cmds.
func New(opts Options) Model {
	if opts.Backend == nil {
		panic("tui: Options.Backend is nil")
	}
	return newModel(context.Background(), opts)
}

func newModel(ctx context.Context, opts Options) Model {
	keys := defaultKeys()
	th := style.New(opts.Theme != "light")
	m := Model{
		opts:   opts,
		b:      opts.Backend,
		w:      newWorkers(ctx),
		keys:   keys,
		th:     th,
		md:     &widget.Markdown{},
		width:  80,
		height: 24,
		input:  newInput(th, keys),
		mouse:  opts.Mouse,
		bar: statusBar{
			spokeModel: opts.SpokeModel,
			hasOllama:  opts.Ollama != nil,
			working:    map[string]bool{},
			background: -1,
		},
		after: func(d time.Duration, msg tea.Msg) tea.Cmd {
			return tea.Tick(d, func(time.Time) tea.Msg { return msg })
		},
		now:      time.Now,
		throttle: 50 * time.Millisecond,
		extras:   map[string]map[uint64]*chat.Extras{},
		kept:     map[string][]chat.Kept{},
		prompter: opts.Prompter,
		gone:     map[uint64]bool{},
		setup:    newSetup(opts),
	}
	m.bar.vanilla = opts.Vanilla
	if opts.Broker != nil {
		m.trusted = opts.Broker.Trusted()
	}
	m.bar.hubModel = m.b.HubModel() // a name the hub holds, not a call out
	m.chat = m.newChatView(opts.Private && opts.ResumeChat == "")
	if opts.ResumeChat != "" {
		m.chat.Chat.ID = opts.ResumeChat
	}
	m.layout()
	return m
}

func (m *Model) newChatView(private bool) chat.Pane {
	m.views++
	c := chat.NewPane(private)
	c.VID = m.views
	return c
}

// Init checks Ollama, opens the chat to resume, and asks the terminal for
// its background when the theme is "auto".
func (m Model) Init() tea.Cmd {
	cmds := []tea.Cmd{checkHealth(m.w.base, m.opts.Ollama, m.b)}
	if m.setup.checking {
		cmds = append(cmds, m.setupCmd())
	}
	if m.chat.Chat.ID != "" {
		cmds = append(cmds, loadChat(m.b, m.chat.Chat.ID))
	} else {
		cmds = append(cmds, warmNew(m.b))
	}
	if m.opts.Theme == "" || m.opts.Theme == "auto" {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	if m.prompter != nil {
		cmds = append(cmds, m.prompter.Wait(m.pseen, m.w.quit))
	}
	return tea.Batch(cmds...)
}

// Update handles one message. Any change to what the conversation shows
// re-renders it once, at the end.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if arm := m.regate(); arm != nil {
		// A dialog came on top that the person did not open: it waits.
		cmd = tea.Batch(cmd, arm)
	}
	if m.notice != m.noticeShown {
		// A new notice fades after a while; one that wraps takes lines
		// from the conversation while it shows.
		m.noticeShown = m.notice
		m.noticeSeq++
		if m.notice != "" && m.after != nil {
			cmd = tea.Batch(cmd, m.after(noticeTTL(m.notice), noticeFadeMsg{seq: m.noticeSeq}))
		}
	}
	if r := m.ruleRows(); r != m.ruleShown {
		m.ruleShown = r
		m.layout()
	}
	m.refresh()
	if m.chat.WantsOlder() {
		m.chat.Paging = true
		cmd = tea.Batch(cmd, loadOlder(m.b, m.chat.VID, m.chat.Chat.ID, m.chat.Turns[0].Seq))
	}
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		if m.memv != nil {
			m.memv.Update(msg)
		}
		if m.mgr != nil {
			m.mgr.Update(msg)
		}
		if m.list != nil {
			m.list.Update(msg)
		}
		if m.models != nil {
			m.models.Update(msg)
		}
	case tea.BackgroundColorMsg:
		if m.opts.Theme == "" || m.opts.Theme == "auto" {
			m.th = style.New(msg.IsDark())
			m.input.setTheme(m.th)
			if m.perm != nil {
				m.perm.SetTheme(m.th)
			}
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.MouseWheelMsg:
		switch m.overlay {
		case overlayNone:
			m.chat.Scroll(m.drawCtx(), msg, false)
		case overlayHelp:
			m.helpWheel(msg)
		case overlayPermission:
			return m.permKey(msg)
		case overlayManager:
			return m.toScreen(msg)
		case overlayMemory:
			return m.toScreen(msg)
		}
	case tea.PasteMsg:
		switch {
		case m.unarmed():
			return m.toInput(msg) // typing, not an answer
		case m.overlay == overlayNone:
			return m.input.update(msg)
		case m.overlay == overlayPermission && m.perm != nil:
			return m.permKey(msg) // a paste is typing, or the note's
		case m.overlay.full() && m.screenOn() != nil:
			return m.toScreen(msg)
		}
	case permscreen.Loaded:
		m.trusted = msg.Trusted
		if m.mgr != nil {
			cmd, _ := m.mgr.Update(msg)
			return cmd
		}
	case models.Loaded:
		return m.onModels(msg)
	case modelSetMsg:
		return m.onModelSet(msg)
	case permscreen.Exported:
		return m.onExport(msg)
	case appscreen.Loaded:
		return m.onApps(msg)
	case memscreen.Loaded:
		if m.memv != nil {
			cmd, _ := m.memv.Update(msg)
			return cmd
		}
	case permission.Queue:
		return m.onPrompts(msg)
	case armMsg:
		m.onArm(msg)
	case revealedMsg:
		if msg.err != nil {
			m.notice = "could not log the reveal: " + msg.err.Error()
		}
	case turnMsg:
		return m.onTurn(msg)
	case pullMsg:
		return m.onPull(msg)
	case chatCreatedMsg:
		return m.onChatCreated(msg)
	case chatLoadedMsg:
		m.onChatLoaded(msg)
	case olderMsg:
		m.onOlder(msg)
	case chats.Loaded:
		if m.list != nil {
			cmd, _ := m.list.Update(msg)
			return cmd
		}
	case chats.Deleted:
		return m.onChatDeleted(msg)
	case noticeFadeMsg:
		if msg.seq == m.noticeSeq {
			m.notice = ""
		}
	case healthMsg:
		m.bar.ollama = ollamaState{checked: msg.checked, version: msg.version, err: msg.err}
		m.bar.sawBackground(msg.background)
		m.bar.listing = msg.listing
		if m.run == nil {
			// While a turn runs its events are fresher than this answer.
			m.bar.working = map[string]bool{}
		}
		for _, a := range msg.working {
			m.bar.working[a] = true
		}
		recheck := m.setupHealth(msg)
		if m.after != nil {
			return tea.Batch(recheck, m.after(msg.poll(), pollMsg{}))
		}
		return recheck
	case setup.Result:
		return m.onSetup(msg)
	case setupTickMsg:
		return m.onSetupTick(msg)
	case pollMsg:
		return checkHealth(m.w.base, m.opts.Ollama, m.b)
	case frameMsg:
		if m.run == nil && m.pulling == nil {
			m.ticking = false
			return nil
		}
		m.frame++
		return m.after(120*time.Millisecond, frameMsg{})
	case list.FilterMatchesMsg:
		// The chats list's filter, computed off the loop.
		if m.list != nil {
			cmd, _ := m.list.Update(msg)
			return cmd
		}
	default:
		if m.perm != nil {
			// The dialog's forms' messages.
			return m.permKey(msg)
		}
		// huh's own messages (moving between fields, a cursor's blink) go
		// to the part whose form is open.
		if m.overlay == overlayModels && m.models != nil {
			return m.modelsKey(msg) // its picker's messages
		}
		if m.overlay == overlayPull && m.pull != nil {
			return m.pullKey(msg) // its confirmation's messages
		}
		if m.overlay == overlayChats && m.list != nil {
			// Its confirmation is a form of its own.
			cmd, _ := m.list.Update(msg)
			return cmd
		}
		if m.screenOn() != nil {
			// A screen's confirmation is a form of its own.
			return m.toScreen(msg)
		}
		if m.overlay == overlayNone {
			return m.input.update(msg)
		}
	}
	return nil
}

// tick starts the spinner's timer unless it runs already.
func (m *Model) tick() tea.Cmd {
	if m.ticking || m.after == nil {
		return nil
	}
	m.ticking = true
	return m.after(120*time.Millisecond, frameMsg{})
}
