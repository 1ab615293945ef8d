package files

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

type match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

type searchResult struct {
	Matches   []match `json:"matches"`
	Truncated bool    `json:"truncated"`
}

// search looks for query, ignoring case, in the text files under p. It
// skips .git folders, symbolic links, binary files and files over 1 MiB,
// and stops at maxMatches.
func (a *App) search(ctx context.Context, query, p string) (searchResult, error) {
	if strings.TrimSpace(query) == "" {
		return searchResult{}, errors.New("the query is empty")
	}
	q := strings.ToLower(query)
	r, rel, shown, err := a.open(p, true)
	if err != nil {
		return searchResult{}, err
	}
	defer r.Close()
	fsys := r.FS()
	start := filepath.ToSlash(rel)
	res := searchResult{Matches: []match{}}
	err = fs.WalkDir(fsys, start, func(name string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if name == start {
				return err
			}
			return nil // an unreadable corner does not spoil the search
		}
		if d.IsDir() {
			if d.Name() == ".git" && name != start {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > maxSearchFile {
			return nil
		}
		if searchFile(fsys, name, q, &res) {
			return fs.SkipAll
		}
		return nil
	})
	if ctxErr := ctx.Err(); ctxErr != nil {
		return searchResult{}, ctxErr
	}
	if err != nil {
		return searchResult{}, failure("search", shown, err)
	}
	return res, nil
}

// searchFile adds name's lines that contain q (lower case) to res and
// reports whether the match limit was reached.
func searchFile(fsys fs.FS, name, q string, res *searchResult) bool {
	data, err := fs.ReadFile(fsys, name)
	if err != nil || !isText(data) {
		return false
	}
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if !strings.Contains(strings.ToLower(string(line)), q) {
			continue
		}
		if len(res.Matches) == maxMatches {
			res.Truncated = true
			return true
		}
		text := bytes.TrimSpace(line)
		if len(text) > maxLineText {
			text = cutRunes(text[:maxLineText])
		}
		res.Matches = append(res.Matches, match{Path: name, Line: n, Text: string(text)})
	}
	return false
}
