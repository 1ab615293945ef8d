package shell

import (
	"encoding/json"
	"fmt"

	"github.com/bulkhead-dev/bulkhead/apps"
)

func manifest(opts Options) apps.Manifest {
	return apps.Manifest{
		Name:        "shell",
		Description: "Runs shell commands in your workspace folder.",
		Functions: []apps.Function{{
			Name: "run",
			Description: fmt.Sprintf("Run one command line with /bin/sh in the workspace folder and return its exit code and output "+
				"(stdout and stderr together, at most %s; longer output is cut and marked truncated). "+
				"The command reads no input. It is stopped after %s and then marked timed_out; "+
				"anything it leaves running in the background is stopped when it exits.", size(opts.MaxOutput), opts.Timeout),
			Effect: apps.EffectIrreversible,
			Params: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"The command line, as you would type it in a terminal."}},"required":["command"],"additionalProperties":false}`),
			Result: json.RawMessage(`{"type":"object","properties":{"exit_code":{"type":"integer"},"output":{"type":"string"},"truncated":{"type":"boolean"},"timed_out":{"type":"boolean"}},"required":["exit_code","output","truncated","timed_out"]}`),
		}},
		Provides: map[string]string{"shell.run": "run"},
	}
}

func size(n int) string {
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
