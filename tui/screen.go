package tui

import (
	"cmp"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/tui/screens"
	appscreen "github.com/bulkhead-dev/bulkhead/tui/screens/apps"
	memscreen "github.com/bulkhead-dev/bulkhead/tui/screens/memory"
	permscreen "github.com/bulkhead-dev/bulkhead/tui/screens/permissions"
)

// beneath is the overlay a permission dialog covers, or the one on top
// when no dialog shows.
func (m Model) beneath() overlay {
	if m.overlay == overlayPermission {
		return m.under
	}
	return m.overlay
}

// screenFull reports whether a full screen is up (under a permission
// dialog, too).
func (m Model) screenFull() bool { return m.beneath().full() }

// screenView draws the full screen open, if any — the permission manager,
// the apps or the memory screen — also while a permission dialog covers
// it.
func (m Model) screenView() (string, bool) {
	o := m.beneath()
	h := m.height - 1
	switch {
	case o == overlayManager && m.mgr != nil:
		return m.mgr.View(m.th, m.width, h, m.now()), true
	case o == overlayApps && m.appsv != nil:
		return m.appsv.View(m.th, m.width, h, m.bar.working), true
	case o == overlayMemory && m.memv != nil:
		return m.memv.View(m.th, m.width, h, m.now()), true
	}
	return "", false
}

// screen is what the root asks of every full screen (tui/screens/…).
type screen interface {
	Update(msg tea.Msg) (tea.Cmd, screens.Outcome)
	Leave() tea.Cmd // end its open confirmation, as esc would
}

// screenOn is the full screen open, also under a permission dialog; nil
// when none is.
func (m *Model) screenOn() screen {
	switch o := m.beneath(); {
	case o == overlayMemory && m.memv != nil:
		return m.memv
	case o == overlayApps && m.appsv != nil:
		return m.appsv
	case o == overlayManager && m.mgr != nil:
		return m.mgr
	}
	return nil
}

// toScreen hands msg to the full screen open and acts on what it asks.
func (m *Model) toScreen(msg tea.Msg) tea.Cmd {
	s := m.screenOn()
	if s == nil {
		return nil
	}
	cmd, out := s.Update(msg)
	switch out {
	case screens.Close:
		m.closeScreen()
	case screens.ToggleTrusted:
		cmd = tea.Batch(cmd, m.toggleTrusted())
	}
	return cmd
}

// closeScreen closes the full screen open.
func (m *Model) closeScreen() {
	o := m.beneath()
	switch o {
	case overlayMemory:
		m.memv = nil
	case overlayApps:
		m.appsv = nil
	case overlayManager:
		m.mgr = nil
	}
	m.hide(o)
}

// leaveScreens ends every screen's open confirmation: a dialog's form
// takes the keys now.
func (m *Model) leaveScreens() tea.Cmd {
	var cmds []tea.Cmd
	if m.memv != nil {
		cmds = append(cmds, m.memv.Leave())
	}
	if m.mgr != nil {
		cmds = append(cmds, m.mgr.Leave())
	}
	return tea.Batch(cmds...)
}

func (m *Model) openMemory() tea.Cmd {
	var cmd tea.Cmd
	m.memv, cmd = memscreen.New(m.th, m.b, m.opts.Vanilla, m.width)
	m.show(overlayMemory)
	return cmd
}

// Installed is the set of installed apps (*apps.Registry satisfies it).
type Installed = appscreen.Installed

// AppSwitch enables and disables installed apps (the hub implements it).
type AppSwitch = appscreen.AppSwitch

func (m *Model) openApps() tea.Cmd {
	var cmd tea.Cmd
	m.appsv, cmd = appscreen.New(appscreen.Config{
		Registry: m.opts.Registry, Sandbox: m.opts.Sandbox, Apps: m.opts.Apps,
		// The spokes' model now, as the status bar has it: /model may
		// have switched it (no call out from the UI loop).
		AppModel: m.opts.AppModel, AppSource: m.opts.AppSource, SpokeModel: cmp.Or(m.bar.spokeModel, m.opts.SpokeModel),
		Working: m.b.Working,
	})
	m.show(overlayApps)
	return cmd
}

// onApps keeps what the apps screen read of the working spokes for the
// status bar, and hands the rest to the screen (which reads again while
// a server is being listed).
func (m *Model) onApps(msg appscreen.Loaded) tea.Cmd {
	if m.run == nil {
		m.bar.working = map[string]bool{}
	}
	for _, a := range msg.Working {
		m.bar.working[a] = true
	}
	if m.appsv != nil {
		cmd, _ := m.appsv.Update(msg)
		return cmd
	}
	return nil
}

// Permissions is what the permission manager needs of the broker
// (*permissions.Broker satisfies it).
type Permissions = permscreen.Permissions

// RuleView is one permission rule of the config, as the manager lists it
// (main fills Options.Rules from config.Config.Rules).
type RuleView = permscreen.RuleView

// openManager shows the permission manager on tab and reads the broker.
func (m *Model) openManager(tab permscreen.Tab) tea.Cmd {
	if m.opts.Broker == nil {
		m.notice = "the permission manager is not available here"
		return nil
	}
	var cmd tea.Cmd
	m.mgr, cmd = permscreen.New(m.th, permscreen.Config{
		Broker: m.opts.Broker, Rules: m.opts.Rules, DataDir: m.opts.DataDir,
		Vanilla: m.opts.Vanilla, Now: func() time.Time { return m.now() }, Changes: m.opts.Changes,
	}, tab, m.width)
	m.show(overlayManager)
	return cmd
}

// toggleTrusted turns trusted-session mode on or off (ctrl+y, /trusted).
func (m *Model) toggleTrusted() tea.Cmd {
	b := m.opts.Broker
	if b == nil {
		m.notice = "trusted-session mode is not available here"
		return nil
	}
	on := !b.Trusted()
	b.SetTrusted(on)
	m.trusted = on
	m.notice = "trusted session off: every request asks again"
	if on {
		m.notice = "trusted session on: expected, reversible requests no longer ask — ctrl+y ends it"
	}
	if m.mgr != nil {
		m.mgr.SetTrusted(on, m.notice)
	}
	return nil
}

// onExport hands the log's export to the manager, or says where it went
// when the manager has closed meanwhile.
func (m *Model) onExport(msg permscreen.Exported) tea.Cmd {
	if m.mgr == nil {
		if msg.Err == nil {
			m.notice = "exported the action log to " + msg.Path
		}
		return nil
	}
	cmd, _ := m.mgr.Update(msg)
	return cmd
}
