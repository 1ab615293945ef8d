package hub

// Who wrote an answer. Every word a channel shows says who wrote it —
// the assistant, the hub, or an app by name — in the TUI, accessible
// mode, `ask` (plain and --json), `chats show` and `chats export`. A
// plan of one app step is answered by that app's spoke: the app's own
// words, written by a model that read the app's data; a plan of several
// is answered by the assistant, which reads no app's text and quotes each
// one by name (synth.go); plain chat, by the assistant.

// AnsweredBy is who wrote the turn's answer: an app's name, VanillaApp
// (the assistant), SynthesisApp (the assistant, from the apps' results)
// or MonolithApp (the --vanilla baseline).
func (t Turn) AnsweredBy() string {
	if t.Author != "" {
		return t.Author
	}
	return answeredBy(t.Plan)
}

func answeredBy(p *Plan) string {
	switch {
	case p == nil || p.Fallback || len(p.Steps) == 0:
		return VanillaApp
	case len(p.Steps) == 1:
		if a := p.Steps[0].App; a != "" {
			return a
		}
		return VanillaApp
	}
	return SynthesisApp
}

// AuthorIsApp reports whether an answer by `by` is an app's words.
func AuthorIsApp(by string) bool {
	switch by {
	case "", VanillaApp, SynthesisApp, MonolithApp:
		return false
	}
	return true
}

// Author says who wrote an answer, in the words every channel shows:
// "the assistant", "weather, an app — its words, not the assistant's".
func Author(by string) string {
	switch by {
	case "", VanillaApp:
		return "the assistant"
	case SynthesisApp:
		return "the assistant, from the apps' results"
	case MonolithApp:
		return "the vanilla baseline (every app in one context, no isolation)"
	}
	return by + ", an app — its words, not the assistant's"
}

// author is who wrote the answer of a turn that ran: the baseline's
// single context in --vanilla, else what its plan says.
func (o *Operator) author(tr *turnRun) string {
	if o.opts.Vanilla {
		return MonolithApp
	}
	if tr == nil {
		return VanillaApp
	}
	p := tr.plan
	return answeredBy(&p)
}
