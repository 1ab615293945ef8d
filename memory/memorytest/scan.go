// Package memorytest reads a data directory's database files as an
// attacker with the disk would, for tests that show deleted data is gone.
package memorytest

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
)

// Hit is one place a needle was found.
type Hit struct {
	File   string // relative to the scanned directory
	Needle string
	How    string // "raw" bytes, or "decoded" from a table's blocks
}

func (h Hit) String() string { return fmt.Sprintf("%s: %q (%s)", h.File, h.Needle, h.How) }

// Find scans every file under dir for the needles: every file's raw bytes,
// and every badger table (.sst) decoded too — its blocks decompressed
// (badger's default, Snappy), every version of every key with its value —
// since a compressed table hides its text from a plain grep. The database
// must be closed. A table that cannot be decoded is an error.
func Find(dir string, needles ...string) ([]Hit, error) {
	var hits []Hit
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if bytes.Contains(raw, []byte(n)) {
				hits = append(hits, Hit{rel, n, "raw"})
			}
		}
		if !strings.HasSuffix(path, ".sst") {
			return nil
		}
		found, err := decodeTable(path, needles)
		if err != nil {
			return fmt.Errorf("decode %s: %w", rel, err)
		}
		for _, n := range found {
			hits = append(hits, Hit{rel, n, "decoded"})
		}
		return nil
	})
	return hits, err
}

// Entries counts the key versions the tables under dir hold, decoded: a
// check that Find reads them at all.
func Entries(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".sst") {
			return err
		}
		return eachEntry(path, func(_, _ []byte) { n++ })
	})
	return n, err
}

func decodeTable(path string, needles []string) ([]string, error) {
	seen := map[string]bool{}
	err := eachEntry(path, func(k, v []byte) {
		for _, n := range needles {
			if bytes.Contains(k, []byte(n)) || bytes.Contains(v, []byte(n)) {
				seen[n] = true
			}
		}
	})
	var out []string
	for _, n := range needles {
		if seen[n] {
			out = append(out, n)
		}
	}
	return out, err
}

func eachEntry(path string, fn func(key, value []byte)) error {
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil && err != z.NewFile {
		return err
	}
	t, err := table.OpenTable(mf, table.Options{ReadOnly: true, BlockSize: 4 << 10, Compression: options.Snappy, ChkMode: options.NoVerification})
	if err != nil {
		return err
	}
	// Not DecrRef: a table's last reference going deletes its file.
	defer t.MmapFile.Close(-1)
	it := t.NewIterator(0)
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		fn(it.Key(), it.ValueCopy().Value)
	}
	return nil
}
