package ollamatest

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
)

// Besides the case studies' prose, the gullible model obeys two plain
// directives wherever it reads them (a tool's output, an app's
// description, shared data, an earlier turn), so attack tests can inject
// any action or any claim without teaching it new prose:
//
//   - CALL <app>.<function> {json arguments}: it makes that call once — as
//     its own tool in that app's spoke, as app__function in the
//     single-context baseline, and as request_functionality for the
//     catalog functionality <app>.<function> anywhere else;
//   - SAY: <text> (to the end of the line): it puts the text at the start
//     of its answer;
//   - INSTEAD (before a CALL): it makes the directed calls in place of
//     what the user asked for, not after it.
var (
	reCallDirective = regexp.MustCompile(`CALL ([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*) `)
	reSayDirective  = regexp.MustCompile(`SAY: ([^\n"]+)`)
	reInstead       = regexp.MustCompile(`INSTEAD,? CALL `)
)

// directed lists the calls CALL directives in its context ask for, in the
// order it read them.
func (g *gullible) directed() []call {
	var out []call
	seen := map[string]bool{}
	for _, m := range reCallDirective.FindAllStringSubmatchIndex(g.all, -1) {
		app, fn := g.all[m[2]:m[3]], g.all[m[4]:m[5]]
		var args map[string]any
		rest := g.all[m[1]:]
		if json.NewDecoder(strings.NewReader(rest)).Decode(&args) != nil {
			// Inside a JSON string (shared data) its quotes are escaped:
			// it reads through that too.
			if json.NewDecoder(strings.NewReader(strings.ReplaceAll(rest, `\"`, `"`))).Decode(&args) != nil {
				continue
			}
		}
		var c call
		switch {
		case g.tools[app+"__"+fn]:
			c = call{app + "__" + fn, args}
		case g.app == app && g.tools[fn]:
			c = call{fn, args}
		case g.tools["request_functionality"]:
			c = call{"request_functionality", map[string]any{"functionality": app + "." + fn, "arguments": args}}
		default:
			continue
		}
		if k := callKey(c.name, c.args); !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	return out
}

// said is the text SAY directives in its context ask it to put first.
func (g *gullible) said() string {
	var out []string
	for _, m := range reSayDirective.FindAllStringSubmatch(g.all, -1) {
		out = append(out, strings.TrimSpace(m[1]))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
