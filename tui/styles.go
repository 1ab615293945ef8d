package tui

import (
	"image/color"

	"charm.land/bubbles/v2/textarea"
	"charm.land/lipgloss/v2"

	"github.com/bulkhead-dev/bulkhead/permissions"
)

// theme is every style the UI draws with, for one background. It is
// rebuilt when the background changes (theme "auto"), never mutated.
type theme struct {
	dark bool

	header    lipgloss.Style // the top line
	brand     lipgloss.Style
	private   lipgloss.Style // the PRIVATE badge
	unsafe    lipgloss.Style // the UNSAFE: vanilla badge
	dim       lipgloss.Style
	userBar   lipgloss.Style // the bar left of the user's words
	userText  lipgloss.Style
	label     lipgloss.Style // "◆ vanilla" above an answer
	thinking  lipgloss.Style
	warn      lipgloss.Style // cut / cancelled markers
	err       lipgloss.Style
	ok        lipgloss.Style
	rule      lipgloss.Style // the line above the input
	notice    lipgloss.Style
	status    lipgloss.Style // the status bar
	statusSep lipgloss.Style
	working   lipgloss.Style
	box       lipgloss.Style // dialog frame
	card      lipgloss.Style // the results card's frame
	boxTitle  lipgloss.Style
	selected  lipgloss.Style
	key       lipgloss.Style
}

func newTheme(dark bool) theme {
	ld := lipgloss.LightDark(dark)
	// 256-colour palette entries: they look the same on every terminal
	// that has colour, where hex colours get downsampled unpredictably.
	var (
		fg       = ld(lipgloss.Color("235"), lipgloss.Color("252"))
		muted    = ld(lipgloss.Color("243"), lipgloss.Color("245"))
		accent   = ld(lipgloss.Color("91"), lipgloss.Color("141"))
		green    = ld(lipgloss.Color("28"), lipgloss.Color("78"))
		red      = ld(lipgloss.Color("160"), lipgloss.Color("203"))
		yellow   = ld(lipgloss.Color("136"), lipgloss.Color("179"))
		blue     = ld(lipgloss.Color("25"), lipgloss.Color("111"))
		panel    = ld(lipgloss.Color("254"), lipgloss.Color("236"))
		privBg   = ld(lipgloss.Color("162"), lipgloss.Color("168"))
		privFg   = ld(lipgloss.Color("231"), lipgloss.Color("232"))
		selectBg = ld(lipgloss.Color("153"), lipgloss.Color("24"))
	)
	return theme{
		dark:      dark,
		header:    lipgloss.NewStyle().Foreground(fg).Background(panel),
		brand:     lipgloss.NewStyle().Foreground(accent).Background(panel).Bold(true),
		private:   lipgloss.NewStyle().Foreground(privFg).Background(privBg).Bold(true),
		unsafe:    lipgloss.NewStyle().Foreground(lipgloss.Color("231")).Background(lipgloss.Color("160")).Bold(true),
		dim:       lipgloss.NewStyle().Foreground(muted),
		userBar:   lipgloss.NewStyle().Foreground(accent),
		userText:  lipgloss.NewStyle().Foreground(fg),
		label:     lipgloss.NewStyle().Foreground(blue).Bold(true),
		thinking:  lipgloss.NewStyle().Foreground(muted).Italic(true),
		warn:      lipgloss.NewStyle().Foreground(yellow).Bold(true),
		err:       lipgloss.NewStyle().Foreground(red).Bold(true),
		ok:        lipgloss.NewStyle().Foreground(green),
		rule:      lipgloss.NewStyle().Foreground(muted),
		notice:    lipgloss.NewStyle().Foreground(yellow),
		status:    lipgloss.NewStyle().Foreground(fg).Background(panel),
		statusSep: lipgloss.NewStyle().Foreground(muted).Background(panel),
		working:   lipgloss.NewStyle().Foreground(blue).Background(panel),
		box:       lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1),
		card:      lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(muted).Padding(0, 1),
		boxTitle:  lipgloss.NewStyle().Foreground(accent).Bold(true),
		selected:  lipgloss.NewStyle().Foreground(fg).Background(selectBg).Bold(true),
		key:       lipgloss.NewStyle().Foreground(accent).Bold(true),
	}
}

// warnColor is the colour of a risky dialog: red when the request is not
// expected or cannot be undone, amber for the other concerns.
func (t theme) warnColor(r permissions.Request) color.Color {
	if dangerous(r) {
		return t.err.GetForeground()
	}
	return t.warn.GetForeground()
}

// statusOK and statusDown colour the Ollama segment of the status bar.
func (t theme) statusOK() lipgloss.Style { return t.status.Foreground(t.ok.GetForeground()) }

func (t theme) statusDown() lipgloss.Style {
	return t.status.Foreground(t.err.GetForeground()).Bold(true)
}

func (t theme) statusPrivate() lipgloss.Style { return t.private }

// trustedBadge marks trusted-session mode: fewer questions are asked.
func (t theme) trustedBadge() lipgloss.Style {
	return lipgloss.NewStyle().Foreground(lipgloss.Color("232")).Background(t.warn.GetForeground()).Bold(true)
}

// statusWaiting colours the count of permission requests waiting.
func (t theme) statusWaiting() lipgloss.Style {
	return t.status.Foreground(t.warn.GetForeground()).Bold(true)
}

// textareaStyles styles the input for this background: no cursor-line
// highlight, a dim placeholder.
func (t theme) textareaStyles() textarea.Styles {
	s := textarea.DefaultStyles(t.dark)
	s.Focused.CursorLine = lipgloss.NewStyle()
	s.Focused.Prompt = t.userBar
	s.Blurred.Prompt = t.dim
	s.Focused.Placeholder = t.dim
	s.Blurred.Placeholder = t.dim
	s.Cursor.Blink = false
	return s
}
