package chat

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// An answer is drawn part by part (hub.Parts, invariant 12): the
// assistant's words as Markdown; an app's in a frame of its own — a line
// that names it, then every line of its words behind a bar, as plain
// text line for line, wrapped inside the frame, so that nothing the app wrote
// can end the frame or draw a line outside it; the hub's own words after
// its mark. Who wrote a word is never a character inside the text.

// drawParts renders ps in w cells.
func drawParts(d Draw, ps hub.Parts, w int) string {
	th := d.Theme
	var out []string
	for _, p := range ps {
		switch p.By {
		case hub.ByAssistant:
			if strings.TrimSpace(p.Text) == "" {
				continue
			}
			out = append(out, d.MD.Render(p.Text, w, th.Dark))
		case hub.ByHub:
			text := strings.Join(hub.Lines(strings.Trim(p.Text, "\n")), "\n")
			lead := th.HubWords.Render("⚑ bulkhead: ")
			for i, l := range strings.Split(widget.FitWidth(widget.Clean(text), max(w-12, 1)), "\n") {
				if i > 0 {
					lead = th.HubWords.Render("⚑           ")
				}
				out = append(out, lead+th.HubWords.Render(l))
			}
		default:
			bar := th.AppBar.Render("│ ")
			out = append(out, ansi.Truncate(th.AppBar.Render("┌ "+widget.OneLine(p.Words())), w, "…"))
			// As the app wrote it, line for line: plain text, wrapped to
			// the frame (Markdown would join its lines, and style them).
			text := strings.Join(hub.Lines(strings.Trim(p.Text, "\n")), "\n")
			body := widget.FitWidth(widget.Clean(text), max(w-2, 1))
			for _, l := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
				out = append(out, bar+ansi.Truncate(l, max(w-2, 1), ""))
			}
			out = append(out, th.AppBar.Render("└"))
		}
	}
	return strings.Join(out, "\n")
}
