package judge

import (
	"strings"
	"unicode/utf8"
)

// ChatFunctionality is the catalog entry of plain conversation (the
// vanilla spoke's): its bindings are what it gets to read.
const ChatFunctionality = "chat"

// Step is one step of the hub's plan: one unit of work, served by one
// app's spoke (the hub's Plan holds them; docs/plan.md).
type Step struct {
	ID            string   `json:"id"`
	Functionality string   `json:"functionality"`
	App           string   `json:"app"`
	Query         string   `json:"query,omitempty"`
	DependsOn     []string `json:"depends_on"`
	// Needs names entities the hub holds whose values the step needs; the
	// operator shares them only after a data permission.
	Needs []string `json:"needs,omitempty"`
	// Bind declares the values the step expects for its function's
	// arguments (bind.go): only what equals a binding is the user's own.
	Bind []Binding `json:"bind,omitempty"`
	// Doubted are the literals the plan bound that the request leaves no
	// single reading (reading.go), each with why and the user's sentence
	// (Why, Quote): set by the operator (CheckBindings), for the dialog's
	// words; they bind nothing.
	Doubted []Binding `json:"doubted,omitempty"`
}

// clip shortens s to at most limit runes, at a sentence's end where one
// is near.
func clip(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)[:limit-1]
	cut := string(r)
	if i := strings.LastIndexAny(cut, ".!?"); i > len(cut)/2 {
		return cut[:i+1]
	}
	return strings.TrimSpace(cut) + "…"
}
