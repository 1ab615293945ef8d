package serve

import (
	"fmt"
	"os"
)

// build identifies this binary: its file's size and time, so that a
// rebuilt bulkhead (go run, an upgrade) replaces an idle serving process
// of the old one instead of talking to its old code.
var build = func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d-%d", fi.Size(), fi.ModTime().UnixNano())
}()
