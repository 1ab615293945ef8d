// Package mcpconfig edits the MCP servers of bulkhead's config file in
// place — adding one (and enabling it), removing one — keeping the rest
// of the file, its comments and its order, as the user wrote them. It is
// what `bulkhead mcp add` and `bulkhead mcp rm` write with; reading the
// config stays package config's.
//
// Its functions read and write a file; they are not safe to run
// concurrently on one file.
package mcpconfig

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"go.yaml.in/yaml/v3"
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

// Add writes mcp.<name> into the config file at path (made, with its
// folder, when missing) and adds name to enable (enable: [builtin, name]
// when the file sets none). An existing entry of that name is replaced.
func Add(path, name string, s Server) error {
	doc, err := load(path)
	if err != nil {
		return err
	}
	root := doc.Content[0]
	mcpNode := child(root, "mcp", yaml.MappingNode)
	entry := &yaml.Node{Kind: yaml.MappingNode}
	set := func(key string, v any) {
		var n yaml.Node
		_ = n.Encode(v)
		if n.Kind == yaml.SequenceNode {
			n.Style = yaml.FlowStyle
		}
		entry.Content = append(entry.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, &n)
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
	put(mcpNode, name, entry)
	hadEnable := has(root, "enable")
	enable := child(root, "enable", yaml.SequenceNode)
	if len(enable.Content) == 0 && !hadEnable {
		enable.Content = append(enable.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "builtin"})
	}
	enable.Style = yaml.FlowStyle
	if !slices.ContainsFunc(enable.Content, func(n *yaml.Node) bool { return n.Value == name || n.Value == "mcp" }) {
		enable.Content = append(enable.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name})
	}
	return save(path, doc)
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
