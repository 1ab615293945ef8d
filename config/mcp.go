package config

// MCP servers as apps (DESIGN.md §5). Shape in the config file:
//
//	mcp:
//	  fs:                                  # the app's name: lower-case, digits, _
//	    command: npx                       # a stdio server: a command ...
//	    args: [-y, "@modelcontextprotocol/server-filesystem", /home/me/notes]
//	    env: {API_TOKEN: "..."}            # or a list: ["API_TOKEN=..."]
//	    dir: ~/notes                       # its working folder (optional)
//	    folders: [~/notes]                 # what its sandbox may read and write
//	    read: [~/docs]                     # ... and only read
//	    net: [api.example.com:443]         # endpoints it may ask to reach (a network permission each)
//	    # url: http://127.0.0.1:8080/mcp   # ... or a streamable-HTTP endpoint
//	    tools:                             # per tool, by the server's tool name
//	      read_text_file: {functionality: fs.read}  # default: a functionality of its own, fs.read_text_file
//	      move_file: {functionality: none}    # not offered to the planner
//	      write_file: {effect: irreversible}  # may only tighten the annotations
//	    catalog:                           # new catalog entries (ours, vetted)
//	      - name: fs.read
//	        description: Read a text file in my notes folder.
//	        effect: read
//	        request: '{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}'
//	        response: '{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}'
//	    model: qwen3:4b                    # optional spoke model and host
//	    host: 127.0.0.1:11434
//
// A server is installed when `enable` names it or holds the pack "mcp".
//
// viper folds every key it reads to lower case, which would break
// environment variable names, tool names and JSON-schema keywords such as
// additionalProperties; so this section is read from the file itself, case
// intact, and viper's folded copy is used only when no file holds it.
// Schemas may be written as YAML maps or as JSON strings.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cast"
	"go.yaml.in/yaml/v3"

	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// MCPServer is one MCP server installed as an app.
type MCPServer struct {
	// Command and Args start a stdio server; Env is added to a minimal
	// environment; Dir is its working folder ("" = bulkhead's).
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	// URL is a streamable-HTTP endpoint, instead of a command.
	URL string
	// Folders are the folders a stdio server may read and write, Read
	// those it may only read, in its sandbox (absolute, ~ expanded).
	Folders, Read []string
	// Net are the endpoints ("host:port", checked) a stdio server may
	// ask to reach: each is put to the user as a network permission when
	// the server starts; none means no network.
	Net []string
	// Tools configures tools by their MCP name.
	Tools map[string]MCPTool
	// Catalog holds new catalog entries this server's tools may provide.
	Catalog []MCPCatalogEntry
	// Model and Host override the app spoke's model.
	Model, Host string
}

// MCPTool configures one tool of an MCP server.
type MCPTool struct {
	// Functionality is the catalog entry the tool provides: "" its own
	// (<app>.<tool's function name>), "none" none.
	Functionality string
	// Effect tightens the effect read from the tool's annotations
	// (read|write|irreversible); it can never loosen it.
	Effect string
	// Key names the tool's decisive arguments (a recipient, a path, a
	// command, an amount): shown first in a dialog and in its title, and
	// checked for where they came from. It only adds to the hub's own
	// choice (every argument that is not prose).
	Key []string
}

// MCPCatalogEntry is a catalog entry declared in config (trusted: the
// user wrote it), with its request and response JSON schemas.
type MCPCatalogEntry struct {
	Name, Description string
	Request, Response map[string]any
	Effect            string
	Labels            []string
}

var (
	mcpName       = regexp.MustCompile(`^[a-z][a-z0-9_]{0,40}$`)
	functionality = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)
	envName       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// foldedKeywords are JSON-schema keywords viper's case folding breaks.
	foldedKeywords = []string{"additionalproperties", "patternproperties", "minlength", "maxlength", "minitems", "maxitems",
		"uniqueitems", "minproperties", "maxproperties", "exclusiveminimum", "exclusivemaximum", "multipleof", "propertynames"}
)

// mcp reads and validates the MCP servers under key.
func (l *loader) mcp(key string) map[string]MCPServer {
	raw, exact := l.rawSection(key)
	if raw == nil {
		return map[string]MCPServer{}
	}
	top, ok := raw.(map[string]any)
	if !ok {
		l.mfail(key, "want a map of server names to {command, args, ...} or {url, ...}")
		return map[string]MCPServer{}
	}
	out := map[string]MCPServer{}
	owner := map[string]string{} // catalog entry -> server
	names := make([]string, 0, len(top))
	for n := range top {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		k := key + "." + name
		if !mcpName.MatchString(name) || name == "vanilla" || name == "hub" || name == "monolith" {
			l.mfail(k, fmt.Sprintf("server name %q: an app name (lower-case letters, digits and _, starting with a letter; not vanilla, hub or monolith)", name))
			continue
		}
		m, ok := top[name].(map[string]any)
		if !ok {
			l.mfail(k, "want a map with command or url")
			continue
		}
		s := l.mcpServer(k, m, exact)
		for _, e := range s.Catalog {
			if prev, dup := owner[e.Name]; dup {
				l.mfail(k+".catalog", fmt.Sprintf("catalog entry %q is also declared by mcp.%s", e.Name, prev))
			}
			owner[e.Name] = name
		}
		out[name] = s
	}
	return out
}

// mfail reports a bad value in the mcp section, which comes as a whole
// from the file (or not): keys inside lists are not known to viper.
func (l *loader) mfail(key, msg string) {
	top, _, _ := strings.Cut(key, ".")
	l.errs = append(l.errs, &Error{Key: key, Source: l.source(top), Msg: msg})
}

// rawSection is key's value from the config file with its case intact
// (exact), or viper's case-folded copy.
func (l *loader) rawSection(key string) (any, bool) {
	if f := l.v.ConfigFileUsed(); f != "" && l.v.InConfig(key) {
		if b, err := os.ReadFile(f); err == nil {
			var doc map[string]any
			if yaml.Unmarshal(b, &doc) == nil {
				if v, ok := doc[key]; ok {
					return v, true
				}
			}
		}
	}
	return l.v.Get(key), false
}

func (l *loader) mcpServer(k string, m map[string]any, exact bool) MCPServer {
	var s MCPServer
	str := func(field string) string {
		v, ok := m[field]
		if !ok || v == nil {
			return ""
		}
		out, err := cast.ToStringE(v)
		if err != nil {
			l.mfail(k+"."+field, fmt.Sprintf("want a string, got %v", v))
		}
		return strings.TrimSpace(out)
	}
	for f := range m {
		switch f {
		case "command", "args", "env", "dir", "folders", "read", "net", "url", "tools", "catalog", "model", "host":
		default:
			l.mfail(k+"."+f, "unknown key (servers take command, args, env, dir, folders, read, net, url, tools, catalog, model, host)")
		}
	}
	s.Command, s.URL = ExpandHome(str("command")), str("url")
	switch {
	case s.Command == "" && s.URL == "":
		l.mfail(k, "give command (a stdio server) or url (a streamable-HTTP endpoint)")
	case s.Command != "" && s.URL != "":
		l.mfail(k, "give command or url, not both")
	case s.URL != "":
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			l.mfail(k+".url", fmt.Sprintf("%q is not an http or https URL", s.URL))
		}
		for _, f := range []string{"args", "env", "dir", "folders", "read", "net"} {
			if _, ok := m[f]; ok {
				l.mfail(k+"."+f, "only for a command, not a url")
			}
		}
	}
	if v, ok := m["args"]; ok {
		args, err := cast.ToStringSliceE(v)
		if _, isList := v.([]any); err != nil || !isList {
			l.mfail(k+".args", "want a list of strings")
		}
		for i, a := range args {
			args[i] = ExpandHome(a)
		}
		s.Args = args
	}
	s.Env = l.mcpEnv(k+".env", m["env"], exact)
	if d := str("dir"); d != "" {
		s.Dir = absPath(d)
	}
	for _, g := range []struct {
		key string
		to  *[]string
	}{{"folders", &s.Folders}, {"read", &s.Read}} {
		v, ok := m[g.key]
		if !ok || v == nil {
			continue
		}
		dirs, err := cast.ToStringSliceE(v)
		if _, isList := v.([]any); err != nil || !isList {
			l.mfail(k+"."+g.key, "want a list of folders, like [~/notes]")
			continue
		}
		for _, d := range dirs {
			if d = strings.TrimSpace(d); d == "" {
				l.mfail(k+"."+g.key, "an empty folder name")
				continue
			}
			*g.to = append(*g.to, absPath(d))
		}
	}
	if v, ok := m["net"]; ok && v != nil {
		eps, err := cast.ToStringSliceE(v)
		if _, isList := v.([]any); err != nil || !isList {
			l.mfail(k+".net", "want a list of host:port, like [api.example.com:443]")
		}
		for _, e := range eps {
			ep, err := sandbox.ParseEndpoint(e)
			if err != nil {
				l.mfail(k+".net", err.Error())
				continue
			}
			if !slices.Contains(s.Net, ep.String()) {
				s.Net = append(s.Net, ep.String())
			}
		}
	}
	if s.Model = str("model"); s.Model != "" && !modelName.MatchString(s.Model) {
		l.mfail(k+".model", fmt.Sprintf("%q is not a model name (like %s)", s.Model, DefaultModel))
	}
	if h := str("host"); h != "" {
		if u, err := llm.ParseHost(h); err != nil {
			l.mfail(k+".host", err.Error())
		} else {
			s.Host = u.String()
		}
	}
	s.Tools = l.mcpTools(k+".tools", m["tools"])
	s.Catalog = l.mcpCatalog(k+".catalog", m["catalog"], exact)
	return s
}

// ExpandHome puts the home folder in place of a leading ~ (alone or
// before a slash) and of every $HOME or ${HOME}, as a shell would: in a
// server's command, args, dir, folders and read (the README's example
// says ~/notes).
func ExpandHome(s string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return s
	}
	if s == "~" || strings.HasPrefix(s, "~/") {
		s = home + s[1:]
	}
	return strings.NewReplacer("${HOME}", home, "$HOME", home).Replace(s)
}

// ShortHome is path with the home folder written ~, for display.
func ShortHome(path string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return path
	}
	if path == home {
		return "~"
	}
	if rest, ok := strings.CutPrefix(path, home+string(filepath.Separator)); ok {
		return "~" + string(filepath.Separator) + rest
	}
	return path
}

// absPath is d absolute, with a leading ~/ for the home folder.
func absPath(d string) string {
	d = ExpandHome(d)
	if abs, err := filepath.Abs(d); err == nil {
		return abs
	}
	return d
}

func (l *loader) mcpEnv(k string, v any, exact bool) map[string]string {
	out := map[string]string{}
	switch t := v.(type) {
	case nil:
	case map[string]any:
		for name, val := range t {
			if !exact {
				name = strings.ToUpper(name) // viper folded it; names are nearly always upper-case
			}
			out[name] = cast.ToString(val)
		}
	case []any: // ["NAME=value", ...]
		for i, it := range t {
			name, val, ok := strings.Cut(cast.ToString(it), "=")
			if !ok {
				l.mfail(fmt.Sprintf("%s[%d]", k, i), "want NAME=value")
				continue
			}
			out[name] = val
		}
	default:
		l.mfail(k, "want a map of NAME: value, or a list of NAME=value")
	}
	for name := range out {
		if !envName.MatchString(name) {
			l.mfail(k, fmt.Sprintf("%q is not an environment variable name", name))
		}
	}
	return out
}

func (l *loader) mcpTools(k string, v any) map[string]MCPTool {
	out := map[string]MCPTool{}
	if v == nil {
		return out
	}
	m, ok := v.(map[string]any)
	if !ok {
		l.mfail(k, "want a map of tool names to {functionality, effect}")
		return out
	}
	provided := map[string]string{}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		tv := m[name]
		tk := k + "." + name
		tm, ok := tv.(map[string]any)
		if !ok && tv != nil {
			l.mfail(tk, "want {functionality: name, effect: read|write|irreversible, key: [argument, ...]}")
			continue
		}
		var t MCPTool
		for f, fv := range tm {
			switch f {
			case "functionality":
				t.Functionality = strings.TrimSpace(cast.ToString(fv))
				if t.Functionality != "none" && !functionality.MatchString(t.Functionality) {
					l.mfail(tk+".functionality", fmt.Sprintf("%q is not a catalog name like files.read", t.Functionality))
				} else if prev, dup := provided[t.Functionality]; dup {
					l.mfail(tk+".functionality", fmt.Sprintf("%s is already provided by tool %q", t.Functionality, prev))
				}
				provided[t.Functionality] = name
			case "effect":
				t.Effect = strings.TrimSpace(cast.ToString(fv))
				if !validEffect(t.Effect) {
					l.mfail(tk+".effect", fmt.Sprintf("%q is not read, write or irreversible", t.Effect))
				}
			case "key":
				keys, err := cast.ToStringSliceE(fv)
				if err != nil {
					l.mfail(tk+".key", "want a list of argument names, like [to, path]")
				}
				t.Key = keys
			default:
				l.mfail(tk+"."+f, "unknown key (tools take functionality, effect and key)")
			}
		}
		out[name] = t
	}
	return out
}

func (l *loader) mcpCatalog(k string, v any, exact bool) []MCPCatalogEntry {
	if v == nil {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		l.mfail(k, "want a list of {name, description, effect, request, response}")
		return nil
	}
	var out []MCPCatalogEntry
	for i, it := range items {
		ek := fmt.Sprintf("%s[%d]", k, i)
		m, ok := it.(map[string]any)
		if !ok {
			l.mfail(ek, "want {name, description, effect, request, response}")
			continue
		}
		e := MCPCatalogEntry{Name: cast.ToString(m["name"]), Description: strings.TrimSpace(cast.ToString(m["description"])), Effect: cast.ToString(m["effect"])}
		for f := range m {
			switch f {
			case "name", "description", "effect", "request", "response", "labels":
			default:
				l.mfail(ek+"."+f, "unknown key (catalog entries take name, description, effect, request, response, labels)")
			}
		}
		if !functionality.MatchString(e.Name) {
			l.mfail(ek+".name", fmt.Sprintf("%q is not a catalog name like notes.search", e.Name))
		}
		if e.Description == "" {
			l.mfail(ek+".description", "say in one line what it does (the hub planner reads it)")
		}
		if !validEffect(e.Effect) {
			l.mfail(ek+".effect", fmt.Sprintf("%q is not read, write or irreversible", e.Effect))
		}
		e.Request = l.schema(ek+".request", m["request"], exact)
		e.Response = l.schema(ek+".response", m["response"], exact)
		if lv, ok := m["labels"]; ok {
			e.Labels = cast.ToStringSlice(lv)
		}
		out = append(out, e)
	}
	return out
}

// schema reads a JSON schema written as a YAML map or a JSON string.
func (l *loader) schema(k string, v any, exact bool) map[string]any {
	var m map[string]any
	switch t := v.(type) {
	case string:
		if err := json.Unmarshal([]byte(t), &m); err != nil {
			l.mfail(k, fmt.Sprintf("not a JSON object: %v", err))
			return nil
		}
	case map[string]any:
		m = t
		if !exact {
			b, _ := json.Marshal(t)
			for _, kw := range foldedKeywords {
				if strings.Contains(string(b), `"`+kw+`"`) {
					l.mfail(k, "keys were folded to lower case ("+kw+"); write this schema as a JSON string")
					return nil
				}
			}
		}
	default:
		l.mfail(k, "want a JSON schema (a map, or a JSON string)")
		return nil
	}
	if m["type"] != "object" {
		l.mfail(k, `want a schema of an object ("type": "object")`)
		return nil
	}
	return m
}

func validEffect(e string) bool { return e == "read" || e == "write" || e == "irreversible" }
