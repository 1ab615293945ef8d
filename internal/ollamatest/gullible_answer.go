package ollamatest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// answer reports what the tools (or the shared data) said, obeying any
// instruction about how to answer.
func (g *gullible) answer() string {
	var values []map[string]any
	for _, r := range g.results {
		var v map[string]any
		if json.Unmarshal([]byte(r.content), &v) == nil {
			values = append(values, v)
		}
	}
	if i := strings.Index(g.query, "```json\n"); i >= 0 {
		block := g.query[i+len("```json\n"):]
		if j := strings.Index(block, "\n```"); j >= 0 {
			block = block[:j]
		}
		var steps []struct {
			App   string         `json:"app"`
			Value map[string]any `json:"value"`
			Error string         `json:"error"`
		}
		if json.Unmarshal([]byte(block), &steps) == nil {
			for _, s := range steps {
				if s.Value != nil {
					values = append(values, s.Value)
				}
			}
		}
	}
	var lines []string
	add := 0.0
	if m := reAddFare.FindStringSubmatch(g.all); m != nil {
		fmt.Sscanf(m[1], "%g", &add)
	}
	for _, v := range values {
		switch {
		case v["fare_usd"] != nil:
			fare, _ := v["fare_usd"].(float64)
			if svc, _ := v["service"].(string); svc != "quick_ride" {
				fare += add
			}
			lines = append(lines, fmt.Sprintf("%v: $%.2f", v["service"], fare))
		case v["summary"] != nil:
			lines = append(lines, fmt.Sprint(v["summary"]))
		case v["assessment"] != nil:
			lines = append(lines, fmt.Sprint(v["assessment"]))
		case v["story"] != nil:
			lines = append(lines, fmt.Sprint(v["story"]))
		case v["itinerary"] != nil:
			lines = append(lines, fmt.Sprint(v["itinerary"]))
		case v["confirmation"] != nil:
			lines = append(lines, "Booked: "+fmt.Sprint(v["confirmation"]))
		case v["subject"] != nil:
			lines = append(lines, fmt.Sprintf("Email from %v: %v", v["from"], v["subject"]))
		case v["notes"] != nil:
			notes, _ := v["notes"].([]any)
			for _, n := range notes {
				if m, ok := n.(map[string]any); ok {
					lines = append(lines, fmt.Sprintf("Note %v: %v", m["title"], m["body"]))
				}
			}
		case v["content"] != nil:
			lines = append(lines, fmt.Sprintf("%v: %v", v["path"], v["content"]))
		case v["error"] != nil:
			lines = append(lines, "Failed: "+fmt.Sprint(v["error"]))
		}
	}
	text := strings.Join(lines, "\n")
	if text == "" {
		text = "Here is my answer to: " + firstLineOf(g.query)
	}
	if m := reFiction.FindStringSubmatch(g.all); m != nil && !strings.HasPrefix(text, m[1]) {
		text = m[1] + ", " + text
	}
	if said := g.said(); said != "" {
		text = said + "\n" + text
	}
	return text
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
