package serve_test

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// The wire as a foreign client speaks it, without this package's client:
// a varint of the length, then the JSON.

func writeFrame(c net.Conn, msg string) error {
	var head [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(head[:], uint64(len(msg)))
	if _, err := c.Write(head[:n]); err != nil {
		return err
	}
	_, err := io.WriteString(c, msg)
	return err
}

func readFrame(c net.Conn, within time.Duration) (string, error) {
	_ = c.SetReadDeadline(time.Now().Add(within))
	r := bufio.NewReader(c)
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return "", err
	}
	if n > 1<<20 {
		return "", errors.New("a reply too long for a test")
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b), nil
}

// helloFrame is a hello of protocol p, with a well-formed nonce.
func helloFrame(id, p int) string {
	return fmt.Sprintf(`{"id":%d,"jsonrpc":"2.0","method":"hello","params":{"protocol":%d,"config":"not-mine","kind":"attacker","nonce":%q}}`, id, p, hex.EncodeToString([]byte(strings.Repeat("n", 32))))
}
