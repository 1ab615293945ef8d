package serve

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
)

// The wire: each JSON-RPC message is a varint of its length, then that
// many bytes of JSON (as jsonrpc2.VarintObjectCodec writes it). Every
// message is bounded, and what a peer cannot send is refused without
// reading it into memory.
const (
	// maxHello bounds a message before the handshake is done: a peer
	// that has not shown it is the user's gets a few kilobytes, and a
	// longer message ends its connection.
	maxHello = 64 << 10
	// maxRequest bounds a client's message (the longest query, say).
	maxRequest = 4 << 20
	// maxReply bounds what a client reads of the serving process (a whole
	// chat's turns, the memory export).
	maxReply = 256 << 20
	// maxSkip bounds a message over the bound that is read past and
	// answered; a longer one ends the connection.
	maxSkip = 1 << 30
)

// ErrTooLarge is matched by the error of a message over the bound.
var ErrTooLarge = errors.New("message too large")

// frames is a jsonrpc2.ObjectStream over a connection.
type frames struct {
	c   net.Conn
	r   *bufio.Reader
	wmu sync.Mutex
	w   *bufio.Writer

	readMax  atomic.Int64
	writeMax int64
	// answer: a message over readMax is read past and becomes a call of
	// mTooLarge with the message's own id, so that its sender is told;
	// else it ends the connection.
	answer atomic.Bool
}

func newFrames(c net.Conn, readMax, writeMax int64) *frames {
	f := &frames{c: c, r: bufio.NewReader(c), w: bufio.NewWriter(c), writeMax: writeMax}
	f.readMax.Store(readMax)
	return f
}

// WriteObject writes obj as one message, or refuses one over writeMax.
func (f *frames) WriteObject(obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	if f.writeMax > 0 && int64(len(data)) > f.writeMax {
		return fmt.Errorf("%w: %s in one message; the serving process takes at most %s", ErrTooLarge, size(int64(len(data))), size(f.writeMax))
	}
	f.wmu.Lock()
	defer f.wmu.Unlock()
	var head [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(head[:], uint64(len(data)))
	if _, err := f.w.Write(head[:n]); err != nil {
		return err
	}
	if _, err := f.w.Write(data); err != nil {
		return err
	}
	return f.w.Flush()
}

// ReadObject reads one message into v.
func (f *frames) ReadObject(v any) error {
	n, err := binary.ReadUvarint(f.r)
	if err != nil {
		return err
	}
	if limit := f.readMax.Load(); n > uint64(limit) {
		if !f.answer.Load() || n > maxSkip {
			return fmt.Errorf("%w: %s (the limit here is %s)", ErrTooLarge, size(int64(min(n, 1<<62))), size(limit))
		}
		// Read past it, keeping its head, where its id is.
		head := make([]byte, min(n, 256))
		if _, err := io.ReadFull(f.r, head); err != nil {
			return err
		}
		if _, err := io.CopyN(io.Discard, f.r, int64(n-uint64(len(head)))); err != nil {
			return err
		}
		// Only a call is answered (it has a method): anything else over
		// the bound — a reply, a notification — ends the connection.
		id := frameID(head)
		if id == "" || !bytes.Contains(head, []byte(`"method"`)) {
			return fmt.Errorf("%w: %s that is not a call", ErrTooLarge, size(int64(n)))
		}
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":{"bytes":%d,"limit":%d},"id":%s}`, mTooLarge, n, limit, id)
		return json.Unmarshal([]byte(msg), v)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(f.r, buf); err != nil {
		return err
	}
	return json.Unmarshal(buf, v)
}

func (f *frames) Close() error { return f.c.Close() }

// frameID is the id of a message from its first bytes: jsonrpc2 writes
// a request's fields in order of their names, "id" first. "" when it is
// not there (a notification, or not JSON-RPC).
func frameID(head []byte) string {
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte(`{"id":`))
	if !ok {
		return ""
	}
	if i := bytes.IndexAny(rest, ",}"); i > 0 {
		id := bytes.TrimSpace(rest[:i])
		if _, err := strconv.ParseUint(string(id), 10, 64); err == nil {
			return string(id)
		}
		var s string
		if json.Unmarshal(id, &s) == nil && len(s) <= 64 {
			b, err := json.Marshal(s)
			if err == nil {
				return string(b)
			}
		}
	}
	return ""
}

// size is n bytes in words.
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
