package guard

import "sort"

// spanMap maps byte offsets of a derived text back to the text it was
// derived from, so that what is found in a normalised text can be located
// in the text the caller gave. It is a list of segments in derived order:
// an exact segment maps byte for byte; any other maps as a whole (a span
// that starts or ends inside it takes all of its source).
type spanMap struct {
	segs []seg
	n    int // the derived text's length
}

type seg struct {
	d, s   int32 // start in the derived text and in the source
	dn, sn int32 // lengths
	exact  bool
}

// add records that derived[d:d+dn] came from source[s:s+sn]; exact says
// byte i of one is byte i of the other.
func (m *spanMap) add(d, dn, s, sn int, exact bool) {
	if dn == 0 {
		return
	}
	m.n = d + dn
	if k := len(m.segs); k > 0 && exact {
		last := &m.segs[k-1]
		if last.exact && int(last.d+last.dn) == d && int(last.s+last.sn) == s {
			last.dn += int32(dn)
			last.sn += int32(sn)
			return
		}
	}
	m.segs = append(m.segs, seg{d: int32(d), s: int32(s), dn: int32(dn), sn: int32(sn), exact: exact})
}

// start is where in the source the derived byte d comes from.
func (m *spanMap) start(d int) int {
	if len(m.segs) == 0 {
		return d
	}
	if d >= m.n {
		last := m.segs[len(m.segs)-1]
		return int(last.s + last.sn)
	}
	i := sort.Search(len(m.segs), func(i int) bool { return int(m.segs[i].d+m.segs[i].dn) > d })
	g := m.segs[i]
	if g.exact {
		return int(g.s) + d - int(g.d)
	}
	return int(g.s)
}

// end is just past where in the source the derived byte d-1 comes from.
func (m *spanMap) end(d int) int {
	if len(m.segs) == 0 {
		return d
	}
	if d <= 0 {
		return int(m.segs[0].s)
	}
	i := sort.Search(len(m.segs), func(i int) bool { return int(m.segs[i].d+m.segs[i].dn) >= d })
	if i == len(m.segs) {
		last := m.segs[i-1]
		return int(last.s + last.sn)
	}
	g := m.segs[i]
	if g.exact {
		return int(g.s) + d - int(g.d)
	}
	return int(g.s + g.sn)
}

// builder writes a derived text and its map.
type builder struct {
	b []byte
	m spanMap
}

func newBuilder(n int) *builder { return &builder{b: make([]byte, 0, n)} }

// copyOf appends src[s:e] unchanged.
func (w *builder) copyOf(src string, s, e int) {
	w.m.add(len(w.b), e-s, s, e-s, true)
	w.b = append(w.b, src[s:e]...)
}

// put appends out in place of source[s:e].
func (w *builder) put(out string, s, e int) {
	w.m.add(len(w.b), len(out), s, e-s, false)
	w.b = append(w.b, out...)
}

// putByte appends c in place of source[s:e].
func (w *builder) putByte(c byte, s, e int) {
	w.m.add(len(w.b), 1, s, e-s, e-s == 1)
	w.b = append(w.b, c)
}
