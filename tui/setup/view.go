package setup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"syscall"

	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// The setup panel's drawing (the root's setup.go has its states). Every word that
// came from Ollama or the configuration — a model name, an error, the
// host — goes through oneLine (internal/termtext).

// panelText collects the panel's lines, wrapped to its width.
type panelText struct {
	w     int
	lines []string
}

// add wraps text (which may carry styles) under an indent.
func (p *panelText) add(indent int, text string) { p.item(indent, "", text) }

// item is text after a mark ("2. "), its wrapped lines under the text.
func (p *panelText) item(indent int, mark, text string) {
	pre := strings.Repeat(" ", indent)
	hang := pre + strings.Repeat(" ", len(mark))
	for i, l := range strings.Split(widget.FitWidth(text, max(p.w-len(hang), 1)), "\n") {
		if i == 0 {
			p.lines = append(p.lines, pre+mark+l)
		} else {
			p.lines = append(p.lines, hang+l)
		}
	}
}

func (p *panelText) blank() { p.lines = append(p.lines, "") }

// Panel is what the panel shows: the root's state of it.
type Panel struct {
	Opts     *Setup
	Phase    Phase
	Checking bool  // a check is in flight
	Wait     int   // seconds until the next check
	Down     error // why Ollama does not answer
	Binary   string
	Version  string
	Models   []Check
	// Declined holds the models not offered for pull again until ctrl+r:
	// "" the user said no, else why the pull failed.
	Declined  map[string]string
	Blocks    bool   // a query cannot be answered now
	Pulling   bool   // the pull dialog is up
	CanSwitch bool   // /model switches the hub's and the spokes' model
	Spinner   string // the spinner's frame
}

// View is the panel in w by h cells, exactly the conversation pane's
// size.
func View(th style.Theme, pn Panel, w, h int) string {
	return widget.PadFrame(widget.FitLines(pn.lines(th, w), w, h), w, h)
}

func (s Panel) lines(th style.Theme, w int) []string {
	p := &panelText{w: w}
	p.blank()
	host := widget.OneLine(s.Opts.Host)
	if host == "" {
		host = llm.DefaultHost
	}
	switch s.Phase {
	case Checking:
		p.add(2, th.Label.Render("Getting ready"))
		p.blank()
		p.add(2, s.Spinner+" checking Ollama at "+th.Key.Render(host)+" and the models…")
		return p.lines
	case Down:
		s.downLines(th, p, host)
	case Models:
		s.modelLines(th, p, host)
	}
	return p.lines
}

func (s Panel) downLines(th style.Theme, p *panelText, host string) {
	p.add(2, th.Err.Render("✗ Ollama is not answering at ")+th.Key.Render(host))
	detail := downReason(s.Down)
	if from := hostFrom(s.Opts.HostFrom); from != "" {
		detail = from + " · " + detail
	}
	p.add(4, th.Dim.Render(detail))
	p.blank()
	p.add(2, "To fix it:")
	step := 1
	switch {
	case !localHost(host):
		p.item(2, fmt.Sprintf("%d. ", step), "Start Ollama on that machine, listening beyond itself: "+th.Key.Render("OLLAMA_HOST=0.0.0.0 ollama serve"))
		step++
	case s.Binary != "":
		p.item(2, fmt.Sprintf("%d. ", step), "Start it: "+th.Key.Render(serveCommand(host))+th.Dim.Render("   (installed: "+widget.OneLine(s.Binary)+")"))
		step++
	default:
		p.item(2, fmt.Sprintf("%d. ", step), "Install Ollama")
		p.add(7, "Linux  "+th.Key.Render("curl -fsSL https://ollama.com/install.sh | sh"))
		p.add(7, "macOS  the app from https://ollama.com/download, or "+th.Key.Render("brew install ollama"))
		step++
		p.item(2, fmt.Sprintf("%d. ", step), "Start it: "+th.Key.Render(serveCommand(host)))
		step++
	}
	file := widget.OneLine(s.Opts.ConfigFile)
	if file == "" {
		file = "the config file"
	}
	p.item(2, fmt.Sprintf("%d. ", step), "Or use a server elsewhere: "+th.Key.Render("bulkhead --ollama-host http://HOST:11434")+
		", or "+th.Key.Render("OLLAMA_HOST")+", or ollama.host in "+file)
	p.blank()
	if s.Checking {
		p.add(2, th.Dim.Render("⟳ checking now…"))
	} else {
		p.add(2, th.Dim.Render(fmt.Sprintf("⟳ checking again in %ds · ctrl+r checks now", max(s.Wait, 1))))
	}
	p.add(2, th.Dim.Render("What you type stays in the input; the chat opens as soon as Ollama answers."))
}

func (s Panel) modelLines(th style.Theme, p *panelText, host string) {
	p.add(2, th.OK.Render("✓ Ollama "+widget.OneLine(s.Version))+th.Dim.Render(" at "+host))
	file := widget.OneLine(s.Opts.ConfigFile)
	if file == "" {
		file = "the config file"
	}
	for _, c := range s.Models {
		if !c.Problem() {
			p.add(2, th.OK.Render("✓ "+widget.OneLine(c.Model))+th.Dim.Render(" — "+RoleNames(c.Roles)))
			continue
		}
		mark := th.Err.Render("✗ ")
		if !c.Blocking() {
			mark = th.Warn.Render("⚠ ")
		}
		name := th.Key.Render(widget.OneLine(c.Model))
		switch {
		case c.err != "":
			p.add(2, mark+name+" — "+RoleNames(c.Roles)+": could not check it")
			p.add(4, th.Dim.Render(widget.OneLine(c.err)))
			continue
		case c.Missing:
			p.add(2, mark+name+" is not installed — the model of "+RoleNames(c.Roles))
			why, asked := s.Declined[c.Model]
			switch {
			case !asked:
				p.add(4, th.Dim.Render("pull offered"))
				continue
			case why == "":
				p.add(4, th.Dim.Render("not pulled"))
			case why == PullCancelled:
				p.add(4, th.Dim.Render(PullCancelled))
			default:
				fail := "pull failed: " + widget.OneLine(why)
				if i := strings.Index(why, "dial tcp"); i >= 0 {
					fail = "pull failed — no network? " + widget.OneLine(why[i:])
				} else if offline(why) {
					fail = "pull failed — no network? " + widget.OneLine(why)
				}
				p.add(4, th.Err.Render(clipRunes(fail, 3*max(p.w-4, 20))))
			}
		default:
			for _, cp := range c.lacks {
				line := mark + name + " cannot " + CapWords[cp] + ", which " + rolesNeeding(c.Roles, cp)
				if cp == llm.CapTools && !c.Blocking() {
					line += ": apps will not run with it (plain chat works)"
				}
				p.add(2, line)
			}
		}
		s.choices(th, p, c, file)
	}
	p.blank()
	switch {
	case s.Pulling:
	case s.Blocks:
		p.add(2, th.Dim.Render(fmt.Sprintf("⟳ checking again in %ds · ctrl+r offers the pull again · ctrl+c quits", max(s.Wait, 1))))
	default:
		p.add(2, th.Dim.Render("esc or a query goes to the chat · ctrl+r checks again"))
	}
}

// choices lists the installed models that can serve c's roles and how
// to choose one.
func (s Panel) choices(th style.Theme, p *panelText, c Check, file string) {
	alts := make([]string, len(c.alts))
	for i, a := range c.alts {
		alts[i] = widget.OneLine(a)
	}
	if len(alts) > 0 {
		p.add(4, "Installed models that can "+CapWords[c.need]+": "+th.Key.Render(strings.Join(alts, ", ")))
	} else {
		p.add(4, "No installed model can "+CapWords[c.need]+th.Dim.Render(" — pull one, e.g. ollama pull qwen3:1.7b"))
		if len(c.hubAlts) > 0 {
			hub := make([]string, len(c.hubAlts))
			for i, a := range c.hubAlts {
				hub[i] = widget.OneLine(a)
			}
			p.add(4, "For the hub alone (hub.model): "+th.Key.Render(strings.Join(hub, ", ")))
		}
	}
	// The roles to change: every one of a missing model's, else those
	// that need what the model lacks. --model and /model choose the
	// hub's and the spokes' model; an app's own model only its key does.
	var keys, own []string
	for _, r := range c.Roles {
		if c.Missing || slices.Contains(c.lacks, r.Need) {
			if r.Key == "hub.model" || r.Key == "spokes.model" {
				keys = append(keys, r.Key)
			} else {
				own = append(own, r.Key)
			}
		}
	}
	if len(keys) > 0 {
		how := "Choose one: quit (ctrl+c) and run " + th.Key.Render("bulkhead --model NAME") + " (the hub and the spokes)"
		if s.CanSwitch {
			how = "Choose one: " + th.Key.Render("/model NAME") + ", or run " + th.Key.Render("bulkhead --model NAME") + " (the hub and the spokes)"
		}
		p.add(4, how+", or set "+strings.Join(keys, " / ")+" in "+file)
	}
	if len(own) > 0 {
		p.add(4, "For "+ownRoles(c.Roles)+": set "+th.Key.Render(strings.Join(own, " / "))+" in "+file+" to one of them, or remove it to use the spokes' model, then start bulkhead again (--model and /model do not change an app's own model)")
	}
	if c.Missing {
		p.add(4, th.Dim.Render("Or pull it yourself (ollama pull "+widget.OneLine(c.Model)+"): this screen notices."))
	}
}

// ownRoles names the roles of apps with a model of their own: "notes's
// spoke".
func ownRoles(rs []Role) string {
	var out []Role
	for _, r := range rs {
		if r.Key != "hub.model" && r.Key != "spokes.model" {
			out = append(out, r)
		}
	}
	return RoleNames(out)
}

// rolesNeeding says which roles need cp: "the spokes need".
func rolesNeeding(rs []Role, cp string) string {
	var out []Role
	for _, r := range rs {
		if r.Need == cp {
			out = append(out, r)
		}
	}
	if len(out) == 1 && out[0].Key != "spokes.model" {
		return RoleNames(out) + " needs"
	}
	return RoleNames(out) + " need"
}

// clipRunes bounds s to n cells.
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:max(n-1, 0)]) + "…"
}

// serveCommand starts Ollama where bulkhead looks for it: `ollama serve`
// listens on 127.0.0.1:11434 unless OLLAMA_HOST says otherwise.
func serveCommand(host string) string {
	u, err := llm.ParseHost(host)
	if err != nil {
		return "ollama serve"
	}
	switch u.Host {
	case "127.0.0.1:11434", "localhost:11434":
		return "ollama serve"
	}
	return "OLLAMA_HOST=" + u.Host + " ollama serve"
}

// RoleNames says who uses a model: "the hub and the spokes".
func RoleNames(rs []Role) string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = widget.OneLine(r.Name)
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// downReason is why nothing answers, in a few words.
func downReason(err error) string {
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused: nothing listens there"
	case errors.As(err, &dns):
		return "host name not found"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "no answer (timed out)"
	}
	var u *llm.UnreachableError
	if errors.As(err, &u) && u.Err != nil {
		err = u.Err
	}
	return widget.OneLine(err.Error())
}

// offline reports whether a pull's error looks like no network.
func offline(msg string) bool {
	msg = strings.ToLower(msg)
	for _, s := range []string{"dial tcp", "no such host", "lookup ", "network is unreachable", "i/o timeout", "tls handshake timeout", "connection refused", "server misbehaving"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// localHost reports whether host is this machine, where installing and
// starting Ollama helps.
func localHost(host string) bool {
	u, err := url.Parse(host)
	if err != nil || u.Hostname() == "" {
		if u, err = url.Parse("http://" + host); err != nil {
			return true
		}
	}
	h := u.Hostname()
	if h == "" || h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// hostFrom says where the host came from, in words.
func hostFrom(from string) string {
	switch {
	case from == "":
		return ""
	case from == "default":
		return "the default host"
	case strings.HasPrefix(from, "--"), strings.HasPrefix(from, "$"):
		return "set by " + from
	}
	return "set by ollama.host in " + from
}
