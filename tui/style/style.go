// Package style is the terminal UI's look: the theme every part of the
// UI draws with, for a dark or a light background. It draws nothing and
// knows nothing of the hub: the parts of the UI (the chat, the dialogs,
// the screens) take a Theme and use its styles.
package style

import (
	"image/color"

	"charm.land/bubbles/v2/textarea"
	"charm.land/lipgloss/v2"
)

// Theme is every style the UI draws with, for one background. It is
// rebuilt when the background changes (theme "auto"), never mutated.
type Theme struct {
	Dark bool

	Header    lipgloss.Style // the top line
	Brand     lipgloss.Style
	Private   lipgloss.Style // the PRIVATE badge
	Unsafe    lipgloss.Style // the UNSAFE: vanilla badge
	Dim       lipgloss.Style
	UserBar   lipgloss.Style // the bar left of the user's words
	UserText  lipgloss.Style
	Label     lipgloss.Style // "◆ vanilla" above an answer
	AppBar    lipgloss.Style // the frame of an app's part of an answer
	HubWords  lipgloss.Style // a part of an answer in bulkhead's own words
	Thinking  lipgloss.Style
	Warn      lipgloss.Style // cut / cancelled markers
	Err       lipgloss.Style
	OK        lipgloss.Style
	Rule      lipgloss.Style // the line above the input
	Notice    lipgloss.Style
	Status    lipgloss.Style // the status bar
	StatusSep lipgloss.Style
	Working   lipgloss.Style
	Box       lipgloss.Style // dialog frame
	Card      lipgloss.Style // the results card's frame
	BoxTitle  lipgloss.Style
	Selected  lipgloss.Style
	Key       lipgloss.Style
}

// New is the theme for a dark or a light background.
func New(dark bool) Theme {
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
	return Theme{
		Dark:      dark,
		Header:    lipgloss.NewStyle().Foreground(fg).Background(panel),
		Brand:     lipgloss.NewStyle().Foreground(accent).Background(panel).Bold(true),
		Private:   lipgloss.NewStyle().Foreground(privFg).Background(privBg).Bold(true),
		Unsafe:    lipgloss.NewStyle().Foreground(lipgloss.Color("231")).Background(lipgloss.Color("160")).Bold(true),
		Dim:       lipgloss.NewStyle().Foreground(muted),
		UserBar:   lipgloss.NewStyle().Foreground(accent),
		UserText:  lipgloss.NewStyle().Foreground(fg),
		Label:     lipgloss.NewStyle().Foreground(blue).Bold(true),
		AppBar:    lipgloss.NewStyle().Foreground(yellow),
		HubWords:  lipgloss.NewStyle().Foreground(accent),
		Thinking:  lipgloss.NewStyle().Foreground(muted).Italic(true),
		Warn:      lipgloss.NewStyle().Foreground(yellow).Bold(true),
		Err:       lipgloss.NewStyle().Foreground(red).Bold(true),
		OK:        lipgloss.NewStyle().Foreground(green),
		Rule:      lipgloss.NewStyle().Foreground(muted),
		Notice:    lipgloss.NewStyle().Foreground(yellow),
		Status:    lipgloss.NewStyle().Foreground(fg).Background(panel),
		StatusSep: lipgloss.NewStyle().Foreground(muted).Background(panel),
		Working:   lipgloss.NewStyle().Foreground(blue).Background(panel),
		Box:       lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1),
		Card:      lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(muted).Padding(0, 1),
		BoxTitle:  lipgloss.NewStyle().Foreground(accent).Bold(true),
		Selected:  lipgloss.NewStyle().Foreground(fg).Background(selectBg).Bold(true),
		Key:       lipgloss.NewStyle().Foreground(accent).Bold(true),
	}
}

// WarnColor is the colour of a risky dialog: red when it is dangerous
// (the request is not expected, or cannot be undone), amber for the other
// concerns.
func (t Theme) WarnColor(dangerous bool) color.Color {
	if dangerous {
		return t.Err.GetForeground()
	}
	return t.Warn.GetForeground()
}

// MaskedText is the style of masked text.
func (t Theme) MaskedText() lipgloss.Style {
	return lipgloss.NewStyle().Foreground(t.Notice.GetForeground()).Italic(true)
}

// StatusOK and statusDown colour the Ollama segment of the status bar.
func (t Theme) StatusOK() lipgloss.Style { return t.Status.Foreground(t.OK.GetForeground()) }

func (t Theme) StatusDown() lipgloss.Style {
	return t.Status.Foreground(t.Err.GetForeground()).Bold(true)
}

func (t Theme) StatusPrivate() lipgloss.Style { return t.Private }

// TrustedBadge marks trusted-session mode: fewer questions are asked.
func (t Theme) TrustedBadge() lipgloss.Style {
	return lipgloss.NewStyle().Foreground(lipgloss.Color("232")).Background(t.Warn.GetForeground()).Bold(true)
}

// StatusWaiting colours the count of permission requests waiting.
func (t Theme) StatusWaiting() lipgloss.Style {
	return t.Status.Foreground(t.Warn.GetForeground()).Bold(true)
}

// TextareaStyles styles the input for this background: no cursor-line
// highlight, a dim placeholder.
func (t Theme) TextareaStyles() textarea.Styles {
	s := textarea.DefaultStyles(t.Dark)
	s.Focused.CursorLine = lipgloss.NewStyle()
	s.Focused.Prompt = t.UserBar
	s.Blurred.Prompt = t.Dim
	s.Focused.Placeholder = t.Dim
	s.Blurred.Placeholder = t.Dim
	s.Cursor.Blink = false
	return s
}
