package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// cardWidth is the widest the results card gets.
const cardWidth = 80

// valueLines is the most wrapped lines one value takes in the card; the
// rest is counted, not shown.
const valueLines = 4

// resultsCard draws the typed results of a plan's steps in a frame no
// wider than w: each step's app and functionality, then its value as
// key: value lines (nested keys joined with dots, numbers as the JSON
// has them), or its error.
func resultsCard(th style.Theme, results []hub.StepResult, w int) string {
	cw := min(w, cardWidth)
	framed := cw >= 12
	inner := cw
	if framed {
		inner = cw - 4
	}
	lines := []string{th.BoxTitle.Render("Results")}
	for _, r := range results {
		head := widget.OneLine(r.App)
		if r.Functionality != "" {
			head += " · " + widget.OneLine(r.Functionality)
		}
		lines = append(lines, wrapStyled(th.Label.Render, "▪ "+head, inner)...)
		if r.Error != "" {
			lines = append(lines, indentWrap(th.Err.Render, "✗ "+widget.OneLine(r.Error), inner, valueLines)...)
			continue
		}
		kvs, err := flatten(r.Value)
		if err != nil {
			lines = append(lines, indentWrap(th.Err.Render, "✗ the value is not JSON", inner, valueLines)...)
			continue
		}
		for _, kv := range kvs {
			text := kv[1]
			if kv[0] != "" {
				text = kv[0] + ": " + kv[1]
			}
			lines = append(lines, indentWrap(nil, text, inner, valueLines)...)
		}
	}
	if !framed {
		for i, l := range lines {
			lines[i] = ansi.Truncate(l, max(w, 1), "")
		}
		return strings.Join(lines, "\n")
	}
	for i, l := range lines {
		if pad := inner - ansi.StringWidth(l); pad > 0 {
			lines[i] = l + strings.Repeat(" ", pad)
		}
	}
	return th.Card.Render(strings.Join(lines, "\n"))
}

// wrapStyled wraps s to w cells and styles each line.
func wrapStyled(style func(...string) string, s string, w int) []string {
	out := strings.Split(widget.FitWidth(s, max(w, 1)), "\n")
	if style != nil {
		for i, l := range out {
			out[i] = style(l)
		}
	}
	return out
}

// indentWrap wraps s under a two-cell indent, keeping at most limit lines
// and saying how much is left out.
func indentWrap(style func(...string) string, s string, w, limit int) []string {
	lines := wrapStyled(style, s, w-2)
	if len(lines) > limit {
		left := len(lines) - limit + 1
		lines = append(lines[:limit-1], "… "+strconv.Itoa(left)+" more lines")
	}
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return lines
}

// flatten lists a JSON value as key/value pairs in the order the JSON has
// them: object keys joined with dots, array items by index, strings
// unquoted and cleaned, numbers exactly as written.
func flatten(raw json.RawMessage) ([][2]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return [][2]string{{"", "(no value)"}}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out [][2]string
	join := func(prefix, k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	var walk func(prefix string) error
	walk = func(prefix string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			n := 0
			for ; dec.More(); n++ {
				key := strconv.Itoa(n)
				if t == '{' {
					kt, err := dec.Token()
					if err != nil {
						return err
					}
					key = widget.OneLine(kt.(string))
				}
				if err := walk(join(prefix, key)); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil { // the closing delimiter
				return err
			}
			if n == 0 {
				empty := "{}"
				if t == '[' {
					empty = "[]"
				}
				out = append(out, [2]string{prefix, empty})
			}
		case string:
			out = append(out, [2]string{prefix, widget.OneLine(t)})
		case json.Number:
			out = append(out, [2]string{prefix, t.String()})
		case bool:
			out = append(out, [2]string{prefix, strconv.FormatBool(t)})
		case nil:
			out = append(out, [2]string{prefix, "null"})
		}
		return nil
	}
	if err := walk(""); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data")
	}
	return out, nil
}
