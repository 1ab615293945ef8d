package termtext

import (
	"io"
	"unicode/utf8"
)

// Writer writes to an underlying writer through Sanitize (NewWriter) or
// JSON (NewJSONWriter), for output that arrives in pieces, such as a
// streamed answer. The stream is sanitized as the terminal would read
// it, as one sequence of bytes: a rune split across two writes is held
// back until its end arrives, so it is neither escaped as two broken
// halves nor written raw. Flush writes what is held (escaped, as bytes
// that never became a rune); call it when the output ends.
//
// Write returns len(p) when the underlying write succeeds, though it may
// have written more (escapes) or fewer (held) bytes. A Writer is not safe
// for concurrent use.
type Writer struct {
	w       io.Writer
	json    bool
	pending []byte // the start of a rune whose end has not arrived
	buf     []byte
}

// NewWriter returns a Writer that writes text to w through Sanitize.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// NewJSONWriter returns a Writer that writes encoded JSON to w through
// JSON, e.g. for a json.Encoder.
func NewJSONWriter(w io.Writer) *Writer { return &Writer{w: w, json: true} }

// Write sanitizes p, holding back an incomplete rune at its end.
func (w *Writer) Write(p []byte) (int, error) {
	data := p
	if len(w.pending) > 0 {
		data = append(w.pending[:len(w.pending):len(w.pending)], p...)
	}
	cut := incompleteTail(data)
	if err := w.emit(data[:len(data)-cut]); err != nil {
		return 0, err
	}
	w.pending = append(w.pending[:0], data[len(data)-cut:]...)
	return len(p), nil
}

// Discard drops a held incomplete rune: what it began was taken back.
func (w *Writer) Discard() { w.pending = w.pending[:0] }

// Flush writes a held incomplete rune, escaped.
func (w *Writer) Flush() error {
	if len(w.pending) == 0 {
		return nil
	}
	p := w.pending
	w.pending = nil
	return w.emit(p)
}

func (w *Writer) emit(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if w.json {
		w.buf = appendJSON(w.buf[:0], p)
	} else {
		w.buf = appendSanitized(w.buf[:0], string(p), false)
	}
	_, err := w.w.Write(w.buf)
	return err
}

// incompleteTail is the length of the start of a rune at the end of p
// whose remaining bytes have not arrived yet (0 if there is none).
func incompleteTail(p []byte) int {
	for i := 1; i < utf8.UTFMax && i <= len(p); i++ {
		if utf8.RuneStart(p[len(p)-i]) {
			if utf8.FullRune(p[len(p)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}
