package changes

import (
	"io"
	"slices"
	"strings"
)

// The folder as the app sees it — the layer over the folder — read the
// way overlayfs merges them: a node of the layer hides the folder's, a
// whiteout removes it, a folder made again (opaque) hides all the
// folder held below it.

// mergedStat is the node at rel as the app sees it, and the root it
// lies in (the layer's or the folder's).
func (r *reader) mergedStat(rel string) (fingerprint, int) {
	els := strings.Split(rel, "/")
	for i := 1; i < len(els); i++ {
		q := strings.Join(els[:i], "/")
		up, _ := statAt(r.up, q)
		switch {
		case up.whiteout(), up.exists() && up.Type != "folder":
			return fingerprint{}, -1
		case up.Type == "folder" && opaque(r.up, q):
			// below it, the layer alone
			fp, _ := statAt(r.up, rel)
			if fp.whiteout() || !fp.exists() {
				return fingerprint{}, -1
			}
			return fp, r.up
		}
	}
	up, _ := statAt(r.up, rel)
	if up.whiteout() {
		return fingerprint{}, -1
	}
	if up.exists() {
		return up, r.up
	}
	lo, _ := statAt(r.lo, rel)
	if !lo.exists() {
		return fingerprint{}, -1
	}
	return lo, r.lo
}

// readView reads the regular file at rel (at most 1 MiB): as the app
// sees it (merged), or as the folder holds it.
func (r *reader) readView(rel string, merged bool) ([]byte, bool) {
	fp, root := r.mergedStat(rel)
	if !merged {
		var err error
		if fp, err = statAt(r.lo, rel); err != nil {
			return nil, false
		}
		root = r.lo
	}
	if fp.Type != "file" {
		return nil, false
	}
	f, err := openFile(root, rel, fp)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	return b, err == nil
}

// listView lists the names of the folder at rel: as the app sees it, or
// as the folder holds it.
func (r *reader) listView(rel string, merged bool) []string {
	lo, _ := names(r.lo, rel)
	if !merged {
		return lo
	}
	if fp, _ := r.mergedStat(rel); fp.Type != "folder" && rel != "" {
		return nil
	}
	up, _ := names(r.up, rel)
	out := append(slices.Clone(lo), up...)
	slices.Sort(out)
	out = slices.Compact(out)
	return slices.DeleteFunc(out, func(n string) bool {
		fp, _ := r.mergedStat(join(rel, n))
		return !fp.exists()
	})
}
