package permissions

import (
	"time"
)

// How a request is decided when nothing is settled for it yet: it passes
// the layers of chain (rules, grants, a trusted session), and the first
// with an opinion decides; none: the Prompter is asked.

// verdict is what one layer of the chain says.
type verdict int

const (
	next  verdict = iota // no opinion: ask the next layer
	allow                // decided yes
	deny                 // decided no
	ask                  // stop: put it to the Prompter
)

// layer is one source of decisions; allows marks layers that can say yes,
// which irreversible requests skip (invariant 3).
type layer struct {
	allows bool
	eval   func(*Broker, Request, time.Time) (verdict, Decision)
}

// chain is the precedence of DESIGN §4, first word wins: deny rule >
// deny grant > ask rule > allow rule > grant > (the Prompter).
var chain = []layer{
	{false, (*Broker).denyRule},
	{false, (*Broker).denyGrant},
	{false, (*Broker).askRule},
	{true, (*Broker).allowRule},
	{true, (*Broker).allowGrant},
	{true, (*Broker).trustedSession},
}

// decideOrChoose is decide, and for a request with choices the chain
// for each choice in turn: the first a rule or grant allows is chosen;
// one denied leaves the choices; none left is a denial; else the
// choices still open are put to the Prompter.
func (b *Broker) decideOrChoose(r *Request) (Decision, bool) {
	if len(r.Choices) == 0 {
		return b.decide(*r)
	}
	var open []string
	for _, c := range r.Choices {
		rc := *r
		rc.Object, rc.Choices = c, nil
		d, ok := b.decide(rc)
		switch {
		case ok && d.Allowed:
			d.Choice = c
			return d, true
		case ok:
			continue
		}
		open = append(open, c)
	}
	if len(open) == 0 {
		return Decision{Answer: AnswerDeny, Source: SourceRule, Note: "every app that offers it is denied"}, true
	}
	r.Choices = open
	return Decision{}, false
}

// decide runs the chain; ok is false when r must be put to the Prompter.
func (b *Broker) decide(r Request) (Decision, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	for _, l := range chain {
		if l.allows && r.EveryTime() {
			continue
		}
		switch v, d := l.eval(b, r, now); v {
		case allow, deny:
			return d, true
		case ask:
			return Decision{}, false
		}
	}
	return Decision{}, false
}

// trustedSession allows routine requests (Request.Routine: expected by
// the plan from this app, here, once, with no concern) while
// trusted-session mode is on. Like every layer that can say yes, it never
// sees an irreversible request; a deny or ask rule still comes first.
func (b *Broker) trustedSession(r Request, _ time.Time) (verdict, Decision) {
	if b.trustedFor(r.Session) && r.Routine() {
		return allow, Decision{Answer: AnswerOnce, Allowed: true, Source: SourcePolicy, Note: "trusted session: routine (expected, reversible, no concern)"}
	}
	return next, Decision{}
}

// SetTrusted turns trusted-session mode on or off for the requests of no
// client session (a process of its own): see SetTrustedIn.
func (b *Broker) SetTrusted(on bool) { b.SetTrustedIn("", on) }

// Trusted reports whether trusted-session mode is on for the requests of
// no client session.
func (b *Broker) Trusted() bool { return b.TrustedIn("") }

// SetTrustedIn turns trusted-session mode on or off for one client
// session: while on, that session's requests the plan expected that are
// not irreversible are allowed without a prompt (and logged);
// irreversible and unexpected ones still ask. It lasts for this Broker
// (this process) and the session only.
func (b *Broker) SetTrustedIn(session string, on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if on {
		b.trusted[session] = true
	} else {
		delete(b.trusted, session)
	}
}

// TrustedIn reports whether trusted-session mode is on for a session.
func (b *Broker) TrustedIn(session string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.trusted[session]
}

// trustedFor is TrustedIn for a caller that holds b.mu: a private turn's
// broker follows the mode of the broker it takes its grants from. The
// parent's lock is taken after b's, never the other way round.
func (b *Broker) trustedFor(session string) bool {
	if b.trusted[session] {
		return true
	}
	if p := b.parent; p != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.trusted[session]
	}
	return false
}

func (b *Broker) denyRule(r Request, _ time.Time) (verdict, Decision) {
	if ru, ok := firstRule(b.rules, EffectDeny, r); ok {
		return deny, Decision{Answer: AnswerDeny, Source: SourceRule, Rule: ru.Where, Note: "denied by the user's rules"}
	}
	return next, Decision{}
}

func (b *Broker) askRule(r Request, _ time.Time) (verdict, Decision) {
	if _, ok := firstRule(b.rules, EffectAsk, r); ok {
		return ask, Decision{}
	}
	return next, Decision{}
}

func (b *Broker) allowRule(r Request, _ time.Time) (verdict, Decision) {
	if ru, ok := firstRule(b.rules, EffectAllow, r); ok {
		ruled := &Request{Kind: r.Kind, Subject: r.Subject, Object: r.Object, Function: r.Function}
		return allow, Decision{Answer: AnswerOnce, Allowed: true, Source: SourceRule, Rule: ru.Where, ruled: ruled}
	}
	return next, Decision{}
}

func (b *Broker) denyGrant(r Request, now time.Time) (verdict, Decision) {
	if g, ok := b.grant(r, now, true); ok {
		note := g.Note
		if note == "" {
			note = "denied earlier by the user"
		}
		return deny, Decision{Answer: AnswerDeny, Source: SourceGrant, GrantID: g.ID, Note: note}
	}
	return next, Decision{}
}

func (b *Broker) allowGrant(r Request, now time.Time) (verdict, Decision) {
	if g, ok := b.grant(r, now, false); ok {
		return allow, Decision{Answer: g.answer(), Allowed: true, Source: SourceGrant, GrantID: g.ID}
	}
	return next, Decision{}
}

// grant finds (and uses) a grant that decides r: one of this broker's,
// else one of the broker it takes its grants from (Options.Grants), whose
// use is counted there. The caller holds b.mu; the parent's lock is
// taken after it, never the other way round.
func (b *Broker) grant(r Request, now time.Time, wantDeny bool) (Grant, bool) {
	if g, ok := b.useGrant(r, now, wantDeny); ok {
		return g, true
	}
	p := b.parent
	if p == nil {
		return Grant{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	saved := p.dry
	p.dry = b.dry
	defer func() { p.dry = saved }()
	return p.useGrant(r, now, wantDeny)
}
