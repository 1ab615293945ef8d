//go:build !linux

package files

import (
	"os"
	"path/filepath"
)

// writeFile writes content to rel through the workspace's root (links
// inside the workspace were refused before: noLinks).
func (a *App) writeFile(rel string, content []byte) error {
	r, err := os.OpenRoot(a.real)
	if err != nil {
		return err
	}
	defer r.Close()
	if dir := filepath.Dir(rel); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return r.WriteFile(rel, content, 0o644)
}

// removeFile removes the entry rel names.
func (a *App) removeFile(rel string) error {
	r, err := os.OpenRoot(a.real)
	if err != nil {
		return err
	}
	defer r.Close()
	return r.Remove(rel)
}
