package accessible

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"charm.land/huh/v2"

	"github.com/bulkhead-dev/bulkhead/headless"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/suggest"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// The line-mode chat is the same product as the TUI: every request and
// every command, asked and answered as lines. A line that starts with
// "/" is a command and never reaches a model (a mistyped one is named,
// with the closest command); a line typed while a request ran, or one a
// dialog was told came too early to answer it, is shown and sent only
// when confirmed.

// Client is what the line-mode chat asks of bulkhead (a serve.Client).
type Client interface {
	headless.Backend
	Chats() ([]hub.Chat, error)
	Installed(ctx context.Context) ([]llm.ModelInfo, error)
	SetModel(ctx context.Context, name string) error
	Current() (hubModel, spokeModel string)
	Grants() []permissions.Grant
	RevokeReport(id string) (permissions.Revoked, error)
	Actions() ([]permissions.Entry, error)
}

// Ollama pulls models (an *llm.Client).
type Ollama interface {
	HasModel(ctx context.Context, model string) (bool, error)
	Pull(ctx context.Context, model string, fn func(llm.Progress)) error
}

// Options says which chat to use, and where models come from.
type Options struct {
	Chat    string // resume this chat ("": a new one)
	Private bool   // a private chat: nothing of it is written to disk
	// Ollama, if set, is asked whether the models are installed at the
	// start, and pulls a missing one when the person says so.
	Ollama Ollama
}

// command is one slash command of the line-mode chat.
type command struct {
	name, args, help string
	run              func(l *chatLoop, arg string) (quit bool, err error)
}

// commands are the slash commands, in the order /help lists them.
var commands []command

func init() {
	commands = []command{
		{"/help", "", "this list", func(l *chatLoop, _ string) (bool, error) { l.help(); return false, nil }},
		{"/new", "", "a new chat", func(l *chatLoop, _ string) (bool, error) { return false, l.newChat(false) }},
		{"/private", "[REQUEST]", "one private request, with no prior context and nothing of it kept; alone, a new private chat (nothing of it reaches the disk)", (*chatLoop).privateCmd},
		{"/retry", "", "run the last request again, if it did not finish", func(l *chatLoop, _ string) (bool, error) { return false, l.retry() }},
		{"/model", "[NAME]", "the installed models, to choose the hub's and the spokes' (kept for later bulkheads; a missing one can be pulled)", (*chatLoop).modelCmd},
		{"/chats", "", "the chats, to open one", func(l *chatLoop, _ string) (bool, error) { return false, l.chatsCmd() }},
		{"/permissions", "", "the grants, to revoke one", func(l *chatLoop, _ string) (bool, error) { return false, l.permissionsCmd() }},
		{"/log", "", "the last entries of the action log", func(l *chatLoop, _ string) (bool, error) { return false, l.logCmd() }},
		{"/quit", "", "end the chat (so does the end of input)", func(*chatLoop, string) (bool, error) { return true, nil }},
	}
}

// chatLoop is one line-mode chat.
type chatLoop struct {
	ctx     context.Context
	c       Client
	lines   *Lines
	out     io.Writer
	opts    Options
	chat    string
	private bool      // the chat is private
	taken   time.Time // when the last request was taken
}

// Run reads one request per line from lines and answers each in the
// same chat, printing to out, until the end of input or /quit. The
// prompter given to the client's connection must be NewPrompter on the
// same Lines, so that dialogs read the same input.
func Run(ctx context.Context, c Client, lines *Lines, out io.Writer, opts Options) error {
	l := &chatLoop{ctx: ctx, c: c, lines: lines, out: out, opts: opts}
	if opts.Chat != "" {
		ch, err := c.Chat(opts.Chat)
		if err != nil {
			return err
		}
		l.chat, l.private = ch.ID, ch.Private
	} else if err := l.open(opts.Private); err != nil {
		return err
	}
	// The planner's prompt is read while the person reads and types
	// (hub.Operator.Warm): the first request reads only its own words.
	if w, ok := c.(interface{ Warm(chat string) error }); ok {
		_ = w.Warm(l.chat)
	}
	fmt.Fprintln(out, "bulkhead, accessible mode. Type a request and press enter; /help lists the commands, /quit or the end of input ends the chat.")
	if l.private {
		fmt.Fprintln(out, "This is a private chat: nothing of it is written to disk.")
	}
	fmt.Fprintln(out, "Permission questions come as numbered lists: type the number and press enter. An empty answer denies.")
	if err := l.checkModels(); err != nil {
		return err
	}
	for {
		prompted := l.lines.now()
		fmt.Fprint(out, "\nrequest: ")
		ln, err := l.lines.next()
		if errors.Is(err, io.EOF) && strings.TrimSpace(ln.s) == "" {
			fmt.Fprintln(out)
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		q := strings.TrimSpace(ln.s)
		if q == "" {
			continue
		}
		ahead := !l.taken.IsZero() && ln.at.After(l.taken) && ln.at.Before(prompted)
		if ln.early || ahead {
			send, cerr := l.confirmAhead(q, ln.early)
			if cerr != nil && !errors.Is(cerr, io.EOF) {
				return cerr
			}
			if !send {
				fmt.Fprintln(out, "Not sent.")
				if errors.Is(err, io.EOF) || errors.Is(cerr, io.EOF) {
					return nil
				}
				continue
			}
		}
		l.taken = l.lines.now()
		quit, rerr := l.do(q)
		if rerr != nil && l.ctx.Err() != nil {
			return l.ctx.Err()
		}
		if rerr != nil {
			fmt.Fprintln(out, plain(rerr.Error(), 2000))
		}
		if quit || errors.Is(err, io.EOF) {
			return nil
		}
	}
}

// do runs one line: a command, or a request.
func (l *chatLoop) do(q string) (quit bool, err error) {
	word, arg, _ := strings.Cut(q, " ")
	arg = strings.TrimSpace(arg)
	// A first word with a second "/" (/etc/hosts, //) is text.
	if !strings.HasPrefix(word, "/") || strings.Contains(word[1:], "/") {
		return false, l.ask(q, false)
	}
	if word == "/exit" {
		word = "/quit"
	}
	for _, c := range commands {
		if c.name == strings.ToLower(word) {
			return c.run(l, arg)
		}
	}
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	msg := fmt.Sprintf("There is no command %s", plain(word, 24))
	if near := suggest.Closest(word, names, true); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, " or ") + "?"
	} else {
		msg += "; /help lists them."
	}
	fmt.Fprintln(l.out, msg+" Nothing was sent.")
	return false, nil
}

// ask runs one request, printed as `ask` prints it: the whole answer at
// once (a screen reader reads it as one block), errors said plainly. A
// model that is missing is offered for a pull, and the request run
// again once it is there.
func (l *chatLoop) ask(q string, private bool) error {
	fmt.Fprintln(l.out, "working…")
	err := headless.Run(l.ctx, l.c, q, headless.Options{Chat: l.chat, Private: private, Attribute: true}, l.out, l.out)
	if err == nil || l.ctx.Err() != nil {
		return err
	}
	if errors.Is(err, headless.ErrRefused) {
		return nil // it finished: its answer says what did not run
	}
	if model, ok := llm.IsModelMissing(err); ok {
		pulled, perr := l.offerPull(model, "to answer this request")
		if perr != nil || !pulled {
			return perr
		}
		if private {
			return l.ask(q, true)
		}
		return l.retry()
	}
	if private {
		fmt.Fprintln(l.out, "The request did not finish; a private request is not kept: type it again to retry.")
	} else {
		fmt.Fprintln(l.out, "The request did not finish; /retry runs it again.")
	}
	return nil
}

// retry runs the chat's last turn again, when it did not finish.
func (l *chatLoop) retry() error {
	last, _, err := l.c.TurnsBefore(l.chat, 0, 1)
	if err != nil {
		return err
	}
	if len(last) == 0 || !last[0].Retryable() {
		fmt.Fprintln(l.out, "The last request finished: there is nothing to retry.")
		return nil
	}
	fmt.Fprintln(l.out, "working…")
	if err := headless.Run(l.ctx, l.c, "", headless.Options{Chat: l.chat, Retry: true, Attribute: true}, l.out, l.out); err != nil && l.ctx.Err() == nil && !errors.Is(err, headless.ErrRefused) {
		fmt.Fprintln(l.out, "The request did not finish; /retry runs it again.")
	}
	return nil
}

// open starts a new chat and makes it this one.
func (l *chatLoop) open(private bool) error {
	ch, err := l.c.NewChat(private)
	if err != nil {
		return err
	}
	l.chat, l.private = ch.ID, private
	return nil
}

func (l *chatLoop) newChat(private bool) error {
	if err := l.open(private); err != nil {
		return err
	}
	if private {
		fmt.Fprintln(l.out, "A new private chat: nothing of it is written to disk, and it is gone when you quit.")
	} else {
		fmt.Fprintln(l.out, "A new chat.")
	}
	return nil
}

func (l *chatLoop) privateCmd(arg string) (bool, error) {
	if arg == "" {
		return false, l.newChat(true)
	}
	return false, l.ask(arg, true)
}

func (l *chatLoop) help() {
	fmt.Fprintln(l.out, "Commands (a line that starts with / is never sent to a model):")
	for _, c := range commands {
		name := c.name
		if c.args != "" {
			name += " " + c.args
		}
		fmt.Fprintf(l.out, "  %s — %s\n", name, c.help)
	}
	fmt.Fprintln(l.out, "Any other line is a request. A line typed while a request runs is shown, and sent only if you say so.")
}

// confirmAhead shows a line typed ahead and asks whether to send it.
func (l *chatLoop) confirmAhead(q string, early bool) (bool, error) {
	why := "while the last request was running"
	if early {
		why = "before a question was asked, so it did not answer it"
	}
	fmt.Fprintf(l.out, "\nYou typed %q %s.\n", plain(q, 200), why)
	send := false
	err := l.question(huh.NewConfirm().Title("Send it as a request?").Affirmative("yes").Negative("no").Value(&send))
	return send && err == nil, err
}

// choose asks for one of options by number; none (the last option,
// also an empty answer) is -1.
func (l *chatLoop) choose(title string, options []string, none string) (int, error) {
	opts := make([]huh.Option[int], 0, len(options)+1)
	for i, o := range options {
		opts = append(opts, huh.NewOption(plain(o, 200), i))
	}
	opts = append(opts, huh.NewOption(none, -1))
	pick := -1
	if err := l.question(huh.NewSelect[int]().Title(title).Options(opts...).Value(&pick)); err != nil {
		if errors.Is(err, io.EOF) {
			return -1, nil
		}
		return -1, err
	}
	return pick, nil
}

// question asks one field as the dialogs do: only a line typed after it
// was written answers it.
func (l *chatLoop) question(f huh.Field) error {
	in, done := l.lines.ask(l.ctx, func(s string) {
		fmt.Fprintf(l.out, "\n(%q came before this question, so it does not answer it; it stays for the chat. Answer now.)\n", plain(s, 60))
	})
	defer done()
	return runField(in, l.out, f)
}

// chatsCmd lists the chats and opens the one chosen.
func (l *chatLoop) chatsCmd() error {
	chats, err := l.c.Chats()
	if err != nil {
		return err
	}
	if len(chats) == 0 {
		fmt.Fprintln(l.out, "There are no chats yet.")
		return nil
	}
	options := make([]string, len(chats))
	for i, ch := range chats {
		title := ch.Title
		if title == "" {
			title = "(untitled)"
		}
		o := fmt.Sprintf("%s — %s", title, ch.Updated.Local().Format("2006-01-02 15:04"))
		if ch.Private {
			o += ", private"
		}
		if ch.ID == l.chat {
			o += " (this chat)"
		}
		options[i] = o
	}
	pick, err := l.choose("Which chat should be opened?", options, "stay in this one")
	if err != nil || pick < 0 {
		return err
	}
	l.chat, l.private = chats[pick].ID, chats[pick].Private
	turns, _, err := l.c.TurnsBefore(l.chat, 0, 3)
	if err != nil {
		return err
	}
	fmt.Fprintf(l.out, "Opened %s.", plain(options[pick], 200))
	if len(turns) > 0 {
		fmt.Fprintln(l.out, " Its last requests:")
		for _, t := range turns {
			fmt.Fprintf(l.out, "  you: %s\n", plain(t.Query, 200))
			if t.Answer != "" {
				for _, line := range strings.Split(strings.TrimRight(t.AnswerParts().Plain("", true), "\n"), "\n") {
					fmt.Fprintf(l.out, "  %s\n", plain(line, 400))
				}
			}
		}
	} else {
		fmt.Fprintln(l.out)
	}
	return nil
}

// permissionsCmd lists the grants and revokes the one chosen.
func (l *chatLoop) permissionsCmd() error {
	grants := l.c.Grants()
	if len(grants) == 0 {
		fmt.Fprintln(l.out, "There are no grants: every request that needs one asks. /log shows the action log.")
		return nil
	}
	options := make([]string, len(grants))
	for i, g := range grants {
		options[i] = grantWords(g)
	}
	fmt.Fprintf(l.out, "%d grants.\n", len(grants))
	pick, err := l.choose("Which grant should be revoked?", options, "none")
	if err != nil || pick < 0 {
		return err
	}
	rev, err := l.c.RevokeReport(grants[pick].ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(l.out, "Revoked: %s%s.\n", options[pick], permissions.StoppedWords(rev.Stopped))
	return nil
}

// grantWords say one grant in a line.
func grantWords(g permissions.Grant) string {
	answer := "allow"
	if g.Deny {
		answer = "deny"
	}
	scope := "for this session"
	if g.Permanent {
		scope = "permanently"
	}
	what := plain(g.Subject, 40)
	if g.Object != "" && g.Object != g.Subject {
		what += " to " + plain(g.Object, 40)
	}
	if g.Function != "" {
		what += ", " + plain(g.Function, 60)
	}
	s := fmt.Sprintf("%s %s: %s %s", answer, g.Kind, what, scope)
	if g.Uses > 0 {
		s += ", used " + strconv.Itoa(g.Uses) + " times"
	}
	if g.Invalid {
		s += " (INVALID SIGNATURE: ignored)"
	}
	return s
}

// logCmd prints the last entries of the action log.
func (l *chatLoop) logCmd() error {
	acts, err := l.c.Actions()
	if err != nil {
		return err
	}
	if len(acts) == 0 {
		fmt.Fprintln(l.out, "The action log is empty.")
		return nil
	}
	if len(acts) > 20 {
		fmt.Fprintf(l.out, "The last 20 of %d entries (bulkhead permissions log shows them all):\n", len(acts))
		acts = acts[len(acts)-20:]
	}
	for _, a := range acts {
		if a.Note != nil {
			fmt.Fprintf(l.out, "  %s note %s: %s\n", a.Time.Local().Format("15:04:05"), plain(a.Note.Subject, 40), plain(a.Note.Detail, 200))
			continue
		}
		verdict := "denied"
		if a.Decision.Allowed {
			verdict = "allowed " + string(a.Decision.Answer)
		}
		fmt.Fprintf(l.out, "  %s %s %s to %s %s: %s by %s\n", a.Time.Local().Format("15:04:05"), a.Request.Kind, plain(a.Request.Subject, 40),
			plain(a.Request.Object, 40), plain(a.Request.Function, 60), verdict, a.Decision.Source)
	}
	return nil
}
