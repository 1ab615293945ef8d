// Package mcpconfig edits the MCP servers of bulkhead's config file in
// place — adding one (and enabling it), changing one, removing one —
// keeping the rest of the file, its comments and its order, as the user
// wrote them: a server added again keeps the keys `mcp add` does not
// write (its tools overrides, its catalog, its model) and its comments,
// and Preview says beforehand what would change. It is what `bulkhead
// mcp add` and `bulkhead mcp rm` write with; reading the config stays
// package config's.
//
// Its functions read and write a file; they are not safe to run
// concurrently on one file.
package mcpconfig

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// Server is what `bulkhead mcp add` writes of a server.
type Server struct {
	Command string
	Args    []string
	Folders []string
	Read    []string
	Net     []string
	Env     map[string]string
}

// written are the keys of an entry that Add writes, in the order it
// writes them; every other key of an entry (tools, catalog, model, host,
// dir) is the user's, and Add leaves it as it is.
var written = []string{"command", "args", "env", "folders", "read", "net"}

// Change is one key of an entry that Add would change: its value before
// and after, each as YAML flow text ("" where the key is absent).
type Change struct {
	Key, Old, New string
}

// Plan is what Add would do to the config file: Exists, when it already
// holds mcp.<name>; then Changes are the keys Add would change (none:
// the entry already says what Add would write) and Kept the keys of the
// entry Add leaves as they are, in the file's order. Enable: Add would
// add the name to enable.
type Plan struct {
	Exists  bool
	Changes []Change
	Kept    []string
	Enable  bool
}

// Preview is what Add(path, name, s) would do, without writing. Values
// are compared as bulkhead reads them: ~ and $HOME expanded, folders
// made absolute, endpoints in their normal form — so a folder the file
// writes ~/notes is the same as the absolute one `mcp add` gives.
func Preview(path, name string, s Server) (Plan, error) {
	doc, err := load(path)
	if err != nil {
		return Plan{}, err
	}
	root := doc.Content[0]
	p := Plan{Enable: !enabled(root, name)}
	m := find(root, "mcp")
	if m == nil || m.Kind != yaml.MappingNode {
		return p, nil
	}
	old := find(m, name)
	if old == nil {
		return p, nil
	}
	p.Exists = true
	if old.Kind != yaml.MappingNode {
		return p, nil
	}
	nodes := entryNodes(s)
	for _, k := range written {
		was, now := find(old, k), nodes[k]
		if same(k, was, now) {
			continue
		}
		p.Changes = append(p.Changes, Change{Key: k, Old: flow(was), New: flow(now)})
	}
	for i := 0; i+1 < len(old.Content); i += 2 {
		k := old.Content[i].Value
		switch {
		case k == "url":
			// a command takes a url's place
			p.Changes = append(p.Changes, Change{Key: k, Old: flow(old.Content[i+1])})
		case !slices.Contains(written, k):
			p.Kept = append(p.Kept, k)
		}
	}
	return p, nil
}

// Add writes mcp.<name> into the config file at path (made, with its
// folder, when missing) and adds name to enable (enable: [builtin, name]
// when the file sets none). In an existing entry it changes only the
// keys it writes (written; and drops a url, which a command replaces):
// a key whose value is the same as bulkhead reads it keeps the file's
// text, and the other keys — tools, catalog, model, host, dir — and the
// comments stay as the user wrote them (Preview says what changes).
func Add(path, name string, s Server) error {
	doc, err := load(path)
	if err != nil {
		return err
	}
	root := doc.Content[0]
	mcpNode := child(root, "mcp", yaml.MappingNode)
	nodes := entryNodes(s)
	if old := find(mcpNode, name); old != nil && old.Kind == yaml.MappingNode {
		update(old, nodes)
	} else {
		entry := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range written {
			if n := nodes[k]; n != nil {
				entry.Content = append(entry.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, n)
			}
		}
		put(mcpNode, name, entry)
	}
	enable(root, name)
	return save(path, doc)
}

// Enable adds name to enable in the config file at path (enable:
// [builtin, name] when the file sets none), unless enable names it
// already or holds the pack mcp; the file is written only when it
// changes.
func Enable(path, name string) error {
	doc, err := load(path)
	if err != nil {
		return err
	}
	if enabled(doc.Content[0], name) {
		return nil
	}
	enable(doc.Content[0], name)
	return save(path, doc)
}

// enabled reports whether root's enable names name or holds the pack
// mcp.
func enabled(root *yaml.Node, name string) bool {
	e := find(root, "enable")
	return e != nil && e.Kind == yaml.SequenceNode && slices.ContainsFunc(e.Content, func(n *yaml.Node) bool { return n.Value == name || n.Value == "mcp" })
}

// enable adds name to root's enable (enable: [builtin, name] when it
// sets none), unless it is there already.
func enable(root *yaml.Node, name string) {
	hadEnable := has(root, "enable")
	e := child(root, "enable", yaml.SequenceNode)
	if len(e.Content) == 0 && !hadEnable {
		e.Content = append(e.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "builtin"})
	}
	e.Style = yaml.FlowStyle
	if !slices.ContainsFunc(e.Content, func(n *yaml.Node) bool { return n.Value == name || n.Value == "mcp" }) {
		e.Content = append(e.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name})
	}
}

// entryNodes are the values Add writes for s, by key; a key s leaves
// empty has none.
func entryNodes(s Server) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	set := func(key string, v any) {
		var n yaml.Node
		_ = n.Encode(v)
		if n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode {
			n.Style = yaml.FlowStyle
		}
		out[key] = &n
	}
	set("command", s.Command)
	if len(s.Args) > 0 {
		set("args", s.Args)
	}
	if len(s.Env) > 0 {
		set("env", s.Env)
	}
	if len(s.Folders) > 0 {
		set("folders", s.Folders)
	}
	if len(s.Read) > 0 {
		set("read", s.Read)
	}
	if len(s.Net) > 0 {
		set("net", s.Net)
	}
	return out
}

// update changes entry's written keys to nodes in place: a value that
// is the same as bulkhead reads it is left as the file has it; a changed
// one takes over the comments of the value it replaces; a key nodes
// lacks is removed, as is a url.
func update(entry *yaml.Node, nodes map[string]*yaml.Node) {
	for i := 0; i+1 < len(entry.Content); {
		k := entry.Content[i].Value
		if k == "url" || slices.Contains(written, k) && nodes[k] == nil {
			entry.Content = slices.Delete(entry.Content, i, i+2)
			continue
		}
		i += 2
	}
	at := 0 // where a missing key goes: after the written keys before it
	for _, k := range written {
		now := nodes[k]
		if now == nil {
			continue
		}
		i := keyIndex(entry, k)
		switch {
		case i < 0:
			entry.Content = slices.Insert(entry.Content, at, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, now)
			at += 2
			continue
		case !same(k, entry.Content[i+1], now):
			was := entry.Content[i+1]
			now.HeadComment, now.LineComment, now.FootComment = was.HeadComment, was.LineComment, was.FootComment
			entry.Content[i+1] = now
		}
		at = i + 2
	}
}

// keyIndex is the index of key's node in mapping m, or -1.
func keyIndex(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// same reports whether two values of key read alike (nil: absent).
func same(key string, a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch key {
	case "command":
		var x, y string
		return a.Decode(&x) == nil && b.Decode(&y) == nil && config.ExpandHome(x) == config.ExpandHome(y)
	case "env":
		var x, y map[string]string
		return a.Decode(&x) == nil && b.Decode(&y) == nil && maps.Equal(x, y)
	}
	var x, y []string
	if a.Decode(&x) != nil || b.Decode(&y) != nil {
		return false
	}
	norm := func(v string) string {
		switch key {
		case "args":
			return config.ExpandHome(v)
		case "folders", "read":
			v = config.ExpandHome(strings.TrimSpace(v))
			if abs, err := filepath.Abs(v); err == nil {
				return abs
			}
		case "net":
			if ep, err := sandbox.ParseEndpoint(v); err == nil {
				return ep.String()
			}
		}
		return v
	}
	return slices.EqualFunc(x, y, func(v, w string) bool { return norm(v) == norm(w) })
}

// flow is a value as one line of YAML ("" for none).
func flow(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	c := *n
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	if c.Kind == yaml.SequenceNode || c.Kind == yaml.MappingNode {
		c.Style = yaml.FlowStyle
	}
	b, err := yaml.Marshal(&c)
	if err != nil {
		return n.Value
	}
	return strings.TrimSpace(string(b))
}

// Remove takes mcp.<name> and name in enable out of the config file;
// removed is false when the file had no such server.
func Remove(path, name string) (removed bool, err error) {
	doc, err := load(path)
	if err != nil {
		return false, err
	}
	root := doc.Content[0]
	if m := find(root, "mcp"); m != nil && m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == name {
				m.Content = slices.Delete(m.Content, i, i+2)
				removed = true
				break
			}
		}
	}
	if e := find(root, "enable"); e != nil && e.Kind == yaml.SequenceNode {
		e.Content = slices.DeleteFunc(e.Content, func(n *yaml.Node) bool { return n.Value == name })
	}
	if !removed {
		return false, nil
	}
	return true, save(path, doc)
}

func load(path string) (*yaml.Node, error) {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var doc yaml.Node
	if len(bytes.TrimSpace(b)) > 0 {
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a map of settings", path)
	}
	return &doc, nil
}

// save writes the file through a temporary one in its folder, renamed
// into place: a crash leaves the old file or the new, never half of one.
func save(path string, doc *yaml.Node) error {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func find(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func has(m *yaml.Node, key string) bool { return find(m, key) != nil }

// child is m's value for key, made (of kind) when missing or empty.
func child(m *yaml.Node, key string, kind yaml.Kind) *yaml.Node {
	if n := find(m, key); n != nil && (n.Kind == kind || n.Kind == yaml.ScalarNode && n.Value == "") {
		n.Kind, n.Tag = kind, ""
		return n
	}
	n := &yaml.Node{Kind: kind}
	put(m, key, n)
	return n
}

// put sets m[key] = v, replacing an entry of that key.
func put(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
}
