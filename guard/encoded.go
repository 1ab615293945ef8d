package guard

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Instructions can be sent encoded, for a model that is glad to decode
// them. A run of base64 (standard or URL alphabet, padded or not, lines
// of a wrapped block read as one) or of hex digits, at least minEncoded
// long, is decoded; if what it says is mostly printable text it is
// scanned (one level deep: encodings inside it are not decoded again),
// and what is found there is reported as a finding over the whole run,
// its kind marked as encoded ("overrides instructions (base64)"). Binary
// data — a digest, a key, an image — decodes to something that is not
// text and is left alone.

const minEncoded = 16

// scanEncoded reports, for each encoded run of s (pass-1 text, case
// kept) that says something instruction-like, each kind found in it, over
// the whole run.
func scanEncoded(ctx context.Context, s string, found func(kind string, start, end int)) error {
	runs := encodedRuns(s)
	for i := 0; i < len(runs); {
		// A wrapped block: runs whose lines are whole quanta, one per line.
		j := i + 1
		for j < len(runs) && wraps(s, runs[j-1], runs[j]) {
			j++
		}
		if ok, err := scanRuns(ctx, s, runs[i:j], found); err != nil {
			return err
		} else if !ok && j-i > 1 {
			for _, r := range runs[i:j] {
				if _, err := scanRuns(ctx, s, [][2]int{r}, found); err != nil {
					return err
				}
			}
		}
		i = j
	}
	return nil
}

// scanRuns decodes runs (read as one) and scans what they say; ok says
// they decoded to text.
func scanRuns(ctx context.Context, s string, runs [][2]int, found func(kind string, start, end int)) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	var b strings.Builder
	for _, r := range runs {
		b.WriteString(s[r[0]:r[1]])
	}
	text, via := decodeRun(b.String())
	if text == "" {
		return false, nil
	}
	fs, err := scan(ctx, text, false)
	if err != nil {
		return true, err
	}
	start, end := runs[0][0], runs[len(runs)-1][1]
	var kinds []string
	for _, f := range fs {
		if !slices.Contains(kinds, f.Kind) {
			kinds = append(kinds, f.Kind)
			found(f.Kind+via, start, end)
		}
	}
	return true, nil
}

// encodedRuns are the runs of s in the base64 alphabets (with their
// padding) at least minEncoded long.
func encodedRuns(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); {
		if !isBase64(s[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isBase64(s[j]) {
			j++
		}
		k := j
		for k < len(s) && k-j < 2 && s[k] == '=' {
			k++
		}
		if j-i >= minEncoded {
			out = append(out, [2]int{i, k})
		}
		i = k
	}
	return out
}

// wraps says b continues a on the next line of a wrapped block.
func wraps(s string, a, b [2]int) bool {
	gap := s[a[1]:b[0]]
	return (gap == "\n" || gap == "\r\n") && (a[1]-a[0])%4 == 0 && s[a[1]-1] != '='
}

func isBase64(c byte) bool {
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '-' || c == '_'
}

// decodeRun decodes run as hex or base64 and returns the text it says and
// how it was encoded, or "" if it says no text.
func decodeRun(run string) (string, string) {
	if h := strings.TrimPrefix(strings.TrimPrefix(run, "0x"), "0X"); len(h) >= minEncoded && len(h)%2 == 0 && strings.IndexFunc(h, notHex) < 0 {
		if b, err := hex.DecodeString(h); err == nil && isText(b) {
			return string(b), viaHex
		}
		return "", ""
	}
	body := strings.TrimRight(run, "=")
	std, url := strings.ContainsAny(body, "+/"), strings.ContainsAny(body, "-_")
	if std && url {
		return "", ""
	}
	if len(body)%4 == 1 {
		body = body[:len(body)-1]
	}
	enc := base64.RawStdEncoding
	if url {
		enc = base64.RawURLEncoding
	}
	b, err := enc.DecodeString(body)
	if err != nil || !isText(b) {
		return "", ""
	}
	return string(b), viaBase64
}

func notHex(r rune) bool {
	return !((r >= '0' && r <= '9') || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F'))
}

// isText is what decoded bytes must be to be read: UTF-8, printable, and
// mostly letters and spaces.
func isText(b []byte) bool {
	if len(b) < minEncoded/2 || !utf8.Valid(b) {
		return false
	}
	var n, bad, wordy int
	for _, r := range string(b) {
		n++
		switch {
		case r == ' ' || unicode.IsLetter(r):
			wordy++
		case r == '\n' || r == '\t' || r == '\r' || unicode.IsPrint(r):
		default:
			bad++
		}
	}
	return bad*20 <= n && wordy*2 >= n
}
