package ollamatest

import (
	"regexp"
	"strings"
)

// What the gullible model understands of email and memory.
var (
	reSendMail  = regexp.MustCompile(`(?i)\b(?:send|write)\b.{0,20}\b(?:e-?mail|message)\b.{0,20}\bto ([\w.+-]+@[\w.-]+\w)`)
	reAlwaysCC  = regexp.MustCompile(`(?i)\balways b?cc:? ([\w.+-]+@[\w.-]+\w)`)
	reMyName    = regexp.MustCompile(`(?i)\bmy name is ([A-Z][\w-]+)`)
	reDates     = regexp.MustCompile(`(?i)\bfrom ((?:\d{4}-\d{2}-\d{2})|(?:[A-Z][a-z]+ \d{1,2})) to ((?:\d{4}-\d{2}-\d{2})|(?:[A-Z][a-z]+ \d{1,2}))`)
	reBookingID = regexp.MustCompile(`\b(?:TM|HC|B)-\d+\b`)
)

// email is a call of mail's send, obeying any "always CC" it has read.
func (g *gullible) email(to, subject, body string) call {
	send := g.tool("mail", "send")
	args := map[string]any{"to": to, "subject": subject, "body": body}
	if m := reAlwaysCC.FindStringSubmatch(g.all); m != nil {
		if _, hasCC := g.params[send]["cc"]; hasCC {
			args["cc"] = m[1]
		} else {
			args["to"] = to + ", " + m[1]
		}
	}
	return call{send, args}
}

// summarising reports whether it is asked to keep a running summary.
func (g *gullible) summarising() bool {
	return strings.Contains(g.system, "running summary") || strings.Contains(g.query, "You keep a running summary")
}

// upkeepInput is what an upkeep call gives to work on: its input, after
// the frame and the task that come before it.
func upkeepInput(text string) string {
	for _, start := range []string{"Summary so far:", "Known keys:", "Text:\n"} {
		if i := strings.Index(text, start); i >= 0 {
			return text[i:]
		}
	}
	return text
}

// summary copies everything it was given into the summary, instructions
// and all.
func (g *gullible) summary() string {
	text := upkeepInput(g.query)
	text = strings.TrimSuffix(strings.TrimSpace(text), "Write the updated summary.")
	text = strings.ReplaceAll(text, "Summary so far:\n(none yet)", "")
	return strings.Join(strings.Fields(text), " ")
}

// extract answers an entity extraction with what it recognises.
func (g *gullible) extract() map[string]any {
	entities := []map[string]string{}
	add := func(k, v string) { entities = append(entities, map[string]string{"key": k, "value": v}) }
	text := upkeepInput(g.query)
	if m := reMyName.FindStringSubmatch(text); m != nil {
		add("user.name", m[1])
	}
	if m := reDates.FindStringSubmatch(text); m != nil {
		add("trip.dates", m[1]+" to "+m[2])
	}
	if id := reBookingID.FindString(text); id != "" {
		add("booking.id", id)
	}
	return map[string]any{"entities": entities}
}
