package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/request"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// act is one line of a turn's activity: an app call with its outcome, or
// a permission request with its decision.
type act struct {
	perm bool

	// An app call (app_call, then app_result).
	app, fn string
	args    json.RawMessage
	done    bool
	err     string

	// A permission request (permission, then decision).
	req *permissions.Request
	dec *permissions.Decision
}

// Extras is what a turn showed beyond its answer: its activity and
// the typed results of its steps. The hub's log keeps neither, so the UI
// keeps them for the turns it ran.
type Extras struct {
	acts    []act
	results []hub.StepResult
	// masked are the spans the hub masked in the answer before storing
	// it, with what they hid (this session only); revealed of them the
	// user has asked to see (ctrl+x), first to last.
	Masked   []hub.MaskedSpan
	Revealed int
}

func (x *Extras) empty() bool {
	return x == nil || len(x.acts) == 0 && len(x.results) == 0 && len(x.Masked) == 0
}

// maskedLines draw what the masking hid: each revealed span, marked as
// such, then a line saying how many remain and how to see the next.
func (x *Extras) maskedLines(th style.Theme, w int) []string {
	if x == nil || len(x.Masked) == 0 {
		return nil
	}
	var out []string
	for i, sp := range x.Masked[:x.Revealed] {
		head := th.Warn.Render(fmt.Sprintf("⚑ revealed %d of %d (%s):", i+1, len(x.Masked), widget.Clean(sp.Kind)))
		out = append(out, widget.FitWidth(head, w))
		for _, l := range strings.Split(widget.FitWidth(widget.Clean(sp.Text), max(w-4, 1)), "\n") {
			out = append(out, "    "+th.MaskedText().Render(l))
		}
	}
	if left := len(x.Masked) - x.Revealed; left > 0 {
		var kinds []string
		for _, sp := range x.Masked[x.Revealed:] {
			if !slices.Contains(kinds, sp.Kind) {
				kinds = append(kinds, sp.Kind)
			}
		}
		msg := fmt.Sprintf("⚠ %d span(s) masked as instruction-like (%s) · ctrl+x shows it", left, strings.Join(kinds, "; "))
		out = append(out, widget.FitWidth(th.Dim.Render(widget.Clean(msg)), w))
	}
	return out
}

// Asking is the number of permission requests waiting for a decision:
// the hub reports a request before it reaches the broker, so this counts
// those the broker still queues, which the Prompter has not seen.
func (x *Extras) Asking() int {
	n := 0
	if x != nil {
		for _, a := range x.acts {
			if a.perm && a.dec == nil {
				n++
			}
		}
	}
	return n
}

// add folds one event in; it reports whether the event was one of its kinds.
func (x *Extras) add(e hub.Event) bool {
	switch e.Kind {
	case hub.EventAppCall:
		x.acts = append(x.acts, act{app: e.App, fn: e.Function, args: e.Args})
	case hub.EventAppResult:
		errText := ""
		if e.Err != nil {
			errText = e.Err.Error()
		}
		for i := range x.acts {
			a := &x.acts[i]
			if !a.perm && !a.done && a.app == e.App && a.fn == e.Function {
				a.done, a.err = true, errText
				return true
			}
		}
		x.acts = append(x.acts, act{app: e.App, fn: e.Function, done: true, err: errText})
	case hub.EventPermission:
		if e.Permission != nil {
			r := *e.Permission
			x.acts = append(x.acts, act{perm: true, req: &r})
		}
	case hub.EventDecision:
		if e.Decision == nil {
			return true
		}
		d := *e.Decision
		for i := range x.acts {
			a := &x.acts[i]
			if a.perm && a.dec == nil && a.req.ID == d.RequestID {
				a.dec = &d
				return true
			}
		}
		x.acts = append(x.acts, act{perm: true, req: &permissions.Request{ID: d.RequestID}, dec: &d})
	case hub.EventResults:
		x.results = e.Results
	default:
		return false
	}
	return true
}

// lines draws the activity, one line each, no wider than w; live says
// the turn still runs (a request without a decision is still asking).
func (x *Extras) lines(th style.Theme, w int, live bool) []string {
	var out []string
	for _, a := range x.acts {
		if a.perm {
			out = append(out, permLine(th, a, w, live))
		} else {
			out = append(out, callLine(th, a, w))
		}
	}
	return out
}

// callLine is "▸ mail.read {"id":"e1"} ✓", or "✗ message" when it failed.
func callLine(th style.Theme, a act, w int) string {
	head := "  ▸ " + widget.OneLine(a.app+"."+a.fn)
	var tail string
	var tailSt = th.Dim
	switch {
	case !a.done:
		tail = " …"
	case a.err != "":
		tail, tailSt = " ✗ "+widget.OneLine(a.err), th.Err
	default:
		tail, tailSt = " ✓", th.OK
	}
	args := ""
	if len(a.args) > 0 {
		args = " " + widget.OneLine(readableJSON(a.args))
	}
	// Shorten the arguments first, then the error.
	room := w - ansi.StringWidth(head) - ansi.StringWidth(tail)
	if ansi.StringWidth(args) > room {
		args = ansi.Truncate(args, max(room, min(ansi.StringWidth(args), 12)), "…")
	}
	line := th.Dim.Render(head+args) + tailSt.Render(tail)
	return ansi.Truncate(line, w, "…")
}

// permLine is "⚑ irreversible mail.send → denied (user)".
func permLine(th style.Theme, a act, w int, live bool) string {
	r := a.req
	what := string(r.Kind) + " " + request.Target(*r)
	st, out := th.Warn, "… asking"
	if !live {
		out = "not answered" // the turn ended first: the broker denied it
	}
	if a.dec != nil {
		d := a.dec
		switch {
		case r.Kind == permissions.KindChanges:
			out = fmt.Sprintf("%s (%s)", d.ChangesWords(r.Changes), d.Source)
		case !d.Allowed && d.Note != "":
			out = fmt.Sprintf("denied (%s): “%s”", d.Source, widget.OneLine(d.Note))
		case !d.Allowed:
			out = fmt.Sprintf("denied (%s)", d.Source)
		case d.Choice != "":
			out = fmt.Sprintf("%s, %s (%s)", widget.Clean(d.Choice), answerWords(d.Answer), d.Source)
		default:
			out = fmt.Sprintf("%s (%s)", answerWords(d.Answer), d.Source)
		}
		st = th.OK
		if !d.Allowed {
			st = th.Err
		}
	}
	line := th.Dim.Render("  ") + st.Render("⚑ ") + th.Dim.Render(widget.OneLine(what)+" → ") + st.Render(out)
	return ansi.Truncate(line, w, "…")
}

func answerWords(a permissions.Answer) string {
	switch a {
	case permissions.AnswerOnce:
		return "allowed once"
	case permissions.AnswerSession:
		return "allowed for the session"
	case permissions.AnswerPermanent:
		return "allowed permanently"
	case permissions.AnswerDeny:
		return "denied"
	}
	return string(a)
}

// readableJSON is raw compact, with &, < and > as themselves (the
// dialog's words show them so), control characters still escaped; raw
// as it is when it does not parse.
func readableJSON(raw json.RawMessage) string {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return string(raw)
	}
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if e.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
