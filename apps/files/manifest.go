package files

import (
	"encoding/json"

	"github.com/bulkhead-dev/bulkhead/apps"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

const (
	pathParam = `{"type":"object","properties":{"path":{"type":"string","description":"File path, relative to the workspace."}},"required":["path"],"additionalProperties":false}`
	okSchema  = `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`
)

func manifest() apps.Manifest {
	return apps.Manifest{
		Name:        "files",
		Description: "Works with the files in your workspace folder: lists folders, reads and searches text files, writes and deletes files. It cannot reach anything outside the workspace.",
		Functions: []apps.Function{
			{
				Name:        "list",
				Description: "List a folder of the workspace: each entry's name, whether it is a folder, and its size in bytes. The path is relative to the workspace; leave it out for the top folder.",
				Effect:      apps.EffectRead,
				Params:      raw(`{"type":"object","properties":{"path":{"type":"string","description":"Folder path, relative to the workspace (default: the top folder)."}},"additionalProperties":false}`),
				Result:      raw(`{"type":"object","properties":{"path":{"type":"string"},"entries":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"dir":{"type":"boolean"},"size":{"type":"integer"},"symlink":{"type":"boolean"}},"required":["name","dir"]}},"truncated":{"type":"boolean"}},"required":["path","entries"]}`),
			},
			{
				Name:        "read",
				Description: "Read a text file of the workspace. Long files are cut off and marked truncated; binary files are refused.",
				Effect:      apps.EffectRead,
				Params:      raw(pathParam),
				Result:      raw(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},"size":{"type":"integer"},"truncated":{"type":"boolean"}},"required":["path","content","truncated"]}`),
			},
			{
				Name:        "search",
				Description: "Search the text files under a folder of the workspace for a phrase, ignoring case. Returns up to 100 matching lines with their file and line number. Skips .git folders, binary files and files over 1 MiB.",
				Effect:      apps.EffectRead,
				Params:      raw(`{"type":"object","properties":{"query":{"type":"string","description":"The phrase to look for."},"path":{"type":"string","description":"Folder or file to search, relative to the workspace (default: everything)."}},"required":["query"],"additionalProperties":false}`),
				Result:      raw(`{"type":"object","properties":{"matches":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"},"line":{"type":"integer"},"text":{"type":"string"}},"required":["path","line","text"]}},"truncated":{"type":"boolean"}},"required":["matches"]}`),
			},
			{
				Name:        "write",
				Description: "Write a text file in the workspace, replacing it if it exists and creating missing folders. It never writes through a symbolic link: give the file's own path.",
				Effect:      apps.EffectIrreversible,
				Params:      raw(`{"type":"object","properties":{"path":{"type":"string","description":"File path, relative to the workspace."},"content":{"type":"string","description":"The complete new content of the file."}},"required":["path","content"],"additionalProperties":false}`),
				Result:      raw(`{"type":"object","properties":{"path":{"type":"string"},"bytes":{"type":"integer"},"created":{"type":"boolean"}},"required":["path","bytes"]}`),
				Changes:     []string{"path"},
			},
			{
				Name:        "delete",
				Description: "Delete a file in the workspace. Folders are not deleted.",
				Effect:      apps.EffectIrreversible,
				Params:      raw(pathParam),
				Result:      raw(okSchema),
				Changes:     []string{"path"},
			},
		},
		Provides: map[string]string{
			"files.list":   "list",
			"files.read":   "read",
			"files.search": "search",
			"files.write":  "write",
			"files.delete": "delete",
		},
	}
}
