package notes

import (
	"encoding/json"

	"github.com/bulkhead-dev/bulkhead/apps"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

const (
	idParam  = `{"type":"object","properties":{"id":{"type":"string","description":"The note's id."}},"required":["id"],"additionalProperties":false}`
	noteJSON = `{"type":"object","properties":{"id":{"type":"string"},"title":{"type":"string"},"body":{"type":"string"},"created":{"type":"string"}},"required":["id","title","body"]}`
	listJSON = `{"type":"object","properties":{"notes":{"type":"array","items":` + noteJSON + `},"truncated":{"type":"boolean"}},"required":["notes"]}`
)

func manifest() apps.Manifest {
	return apps.Manifest{
		Name:        "notes",
		Description: "Keeps your notes: saves a note with a title and a body, finds notes by the words in them, reads and deletes them.",
		Functions: []apps.Function{
			{
				Name:        "add",
				Description: "Save a new note. Returns its id.",
				Effect:      apps.EffectWrite,
				Params:      raw(`{"type":"object","properties":{"title":{"type":"string","description":"A short title."},"body":{"type":"string","description":"The text of the note."}},"required":["title","body"],"additionalProperties":false}`),
				Result:      raw(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`),
			},
			{
				Name:        "search",
				Description: "Find notes whose title or body contain every word of the query, ignoring case, oldest first (at most 100). An empty query returns all notes.",
				Effect:      apps.EffectRead,
				Params:      raw(`{"type":"object","properties":{"query":{"type":"string","description":"Words to look for."}},"additionalProperties":false}`),
				Result:      raw(listJSON),
			},
			{
				Name:        "list",
				Description: "List all notes, oldest first (at most 100).",
				Effect:      apps.EffectRead,
				Params:      raw(`{"type":"object","additionalProperties":false}`),
				Result:      raw(listJSON),
			},
			{
				Name:        "read",
				Description: "Read one note by its id.",
				Effect:      apps.EffectRead,
				Params:      raw(idParam),
				Result:      raw(noteJSON),
			},
			{
				Name:        "delete",
				Description: "Delete one note by its id. This cannot be undone.",
				Effect:      apps.EffectIrreversible,
				Params:      raw(idParam),
				Result:      raw(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`),
			},
		},
		Provides: map[string]string{
			"notes.add":    "add",
			"notes.search": "search",
			"notes.read":   "read",
			"notes.delete": "delete",
		},
	}
}
