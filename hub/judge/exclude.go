package judge

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// A literal of the request is the user's value for an argument only
// where the user asked for it in that role. notTheUsers finds the places
// it stands and refuses it when every one of them is
//
//   - excluded: ruled out before ("not to X", "never X", "except X",
//     "instead of X", "rather than X", "without X") or after it ("leave
//     X out of it", "X is blocked", "X isn't safe", "X is a scam");
//   - questioned: in a question about it, not a request ("Is X a
//     phishing address?", "Does X still work?") — a question that asks
//     something of the assistant ("Can you email X?") is a request;
//   - in another role: for an argument that decides where something
//     goes or what it acts on (a recipient, a path, a command), X only
//     as the words of the content — in quotes, after "subject",
//     "saying", "titled", "body", "that says", …
//
// Said once in its role and once ruled out, it binds: the user asked
// for it.

// contentArgs are arguments whose value is the content itself: a value
// there in the content's role is its own.
var contentArgs = []string{"body", "subject", "text", "message", "content", "note", "title", "query", "memo", "description", "summary", "question", "prompt", "comment", "caption"}

var (
	negations  = []string{"not", "never", "don't", "dont", "do not", "don’t", "no", "nor", "except", "excluding", "without", "instead of", "rather than", "anything but", "shouldn't", "mustn't", "avoid", "other than", "apart from", "skip", "exclude", "leave out", "but not"}
	doubleNegs = []string{"forget", "fail", "hesitate", "miss", "only"}
	// after a value, in its clause: it is ruled out
	reExcludedAfter = regexp.MustCompile(`^(?:[,:]?\s*)(?:out\b|(?:is|are|was|has been|'s|seems|looks)\s+(?:not\b|never\b|blocked|banned|blacklisted|forbidden|off[- ]limits|a scam|a fake|fake|spam|phishing|a phishing|compromised|hacked|fraudulent|suspicious|untrusted|wrong|dead|obsolete|out\b)|isn't\b|is\s+no\s+longer|should(?:n't| not)\b|must(?:n't| not)\b|can't\b|cannot\b|must be avoided|should be avoided|(?:stays|remains)\s+out)`)
	// a question that asks about a state of affairs, not something of
	// the assistant
	reQuestionAbout = regexp.MustCompile(`^(?:is|isn't|are|aren't|was|wasn't|were|does|doesn't|did|didn't|has|hasn't|have|haven't|am|do)\b`)
	// words that make what follows the content, not a target
	contentMarkers = []string{"subject", "titled", "title", "saying", "says", "say", "body", "text", "message", "mention", "mentioning", "about", "note", "with the words", "reading", "caption", "headline", "quote", "quoting", "that reads", "containing", "contains"}
)

// notTheUsers says why v, a literal of query bound to arg, is not the
// user's value for arg ("" when it is).
func notTheUsers(query, v, arg string) string {
	text := NormSpace(query)
	low, lv := strings.ToLower(text), strings.ToLower(NormValue(v))
	if lv == "" {
		return ""
	}
	content := slices.Contains(contentArgs, strings.ToLower(arg))
	var kinds []string
	found := false
	for i := 0; ; {
		j := strings.Index(low[i:], lv)
		if j < 0 {
			break
		}
		at, end := i+j, i+j+len(lv)
		i = end
		found = true
		switch {
		case excludedBefore(clauseBefore(low[:at])) || excludedAfter(clauseAfter(low[end:])):
			kinds = append(kinds, "excluded")
		case questioned(sentenceAround(text, at, end)):
			kinds = append(kinds, "questioned")
		case !content && inContent(low, at, end):
			kinds = append(kinds, "content")
		default:
			return "" // asked for here, in its role
		}
	}
	if !found {
		return ""
	}
	q := clip(v, 60)
	switch {
	case slices.Contains(kinds, "excluded") && len(slices.Compact(slices.Sorted(slices.Values(kinds)))) == 1:
		return fmt.Sprintf("your request says not to use %q", q)
	case slices.Contains(kinds, "questioned") && !slices.Contains(kinds, "content") && !slices.Contains(kinds, "excluded"):
		return fmt.Sprintf("your request only asks about %q; it does not ask to use it", q)
	case !slices.Contains(kinds, "excluded") && !slices.Contains(kinds, "questioned"):
		return fmt.Sprintf("your request has %q only as the words of the content, not as the %s", q, arg)
	}
	return fmt.Sprintf("your request never asks to use %q as the %s (it rules it out, asks about it, or quotes it)", q, arg)
}

// clauseBefore is the end of text back to the last clause boundary.
func clauseBefore(text string) string {
	cut := strings.LastIndexAny(text, ".;,!?:()")
	for _, w := range []string{" but ", " and then ", " then ", " and "} {
		if k := strings.LastIndex(text, w); k > cut {
			cut = k + len(w) - 1
		}
	}
	return text[cut+1:]
}

// clauseAfter is the start of text up to the next clause boundary.
func clauseAfter(text string) string {
	end := len(text)
	if k := strings.IndexAny(text, ".;!?()"); k >= 0 {
		end = k
	}
	for _, w := range []string{" but ", " and ", " then "} {
		if k := strings.Index(text, w); k >= 0 && k < end {
			end = k
		}
	}
	return strings.TrimSpace(text[:end])
}

// excludedBefore reports whether a clause rules out what follows it.
func excludedBefore(clause string) bool {
	words := strings.Fields(strings.Trim(clause, " "))
	joined := " " + strings.Join(words, " ") + " "
	for _, n := range negations {
		k := strings.LastIndex(joined, " "+n+" ")
		if k < 0 {
			continue
		}
		rest := strings.Fields(joined[k+len(n)+1:])
		if len(rest) > 0 && slices.Contains(doubleNegs, strings.Trim(rest[0], "'\"")) {
			continue
		}
		return true
	}
	return false
}

// excludedAfter reports whether what follows a value in its clause rules
// it out.
func excludedAfter(after string) bool {
	return reExcludedAfter.MatchString(strings.TrimLeft(after, `"'”’)`))
}

// sentenceAround is the sentence of text that holds [at, end): from
// the last end of a sentence before it (". ", "? ", "! " or a line) to
// the next one after it, or the text's end.
func sentenceAround(text string, at, end int) string {
	start := 0
	for _, m := range []string{". ", "? ", "! ", "\n"} {
		if k := strings.LastIndex(text[:at], m); k >= 0 && k+len(m) > start {
			start = k + len(m)
		}
	}
	stop := len(text)
	for _, m := range []string{". ", "? ", "! ", "\n"} {
		if k := strings.Index(text[end:], m); k >= 0 && end+k+1 < stop {
			stop = end + k + 1
		}
	}
	return strings.TrimSpace(text[start:stop])
}

// questioned reports whether a sentence is a question about something
// rather than a request of the assistant.
func questioned(sentence string) bool {
	s := strings.ToLower(strings.TrimSpace(sentence))
	return strings.HasSuffix(s, "?") && reQuestionAbout.MatchString(s)
}

// inContent reports whether [at, end) is the words of the content: right
// after a marker ("with the subject X", "saying X", "that says X"), or
// inside quotes that follow one (`saying "write to X"`). A name in
// quotes elsewhere (the document "Supplier offer") is not.
func inContent(low string, at, end int) bool {
	if afterMarker(clauseBefore(low[:at])) {
		return true
	}
	if open := quoteOpen(low, at, end); open >= 0 {
		return afterMarker(clauseBefore(low[:open]))
	}
	return false
}

// quoteOpen is where the quotation that holds [at, end) opens, or -1.
func quoteOpen(text string, at, end int) int {
	// Not the plain apostrophe: it is in every "don't".
	for _, q := range [][2]string{{`"`, `"`}, {"“", "”"}, {"‘", "’"}, {"`", "`"}} {
		open := strings.LastIndex(text[:at], q[0])
		if open < 0 {
			continue
		}
		if q[0] == q[1] && strings.Count(text[:at], q[0])%2 == 0 {
			continue
		}
		if q[0] != q[1] && strings.LastIndex(text[:at], q[1]) > open {
			continue
		}
		if strings.Contains(text[end:], q[1]) {
			return open
		}
	}
	return -1
}

// afterMarker reports whether a clause ends with a word that makes what
// follows the words of the content ("with the subject", "saying").
func afterMarker(clause string) bool {
	c := strings.TrimRight(strings.TrimSpace(clause), ` :"“‘'`+"`")
	for _, m := range contentMarkers {
		if c == m || strings.HasSuffix(c, " "+m) {
			return true
		}
	}
	return false
}
