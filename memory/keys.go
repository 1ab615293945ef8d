package memory

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"regexp"
)

// kindNamespace begins every key that belongs to a namespace. Other first
// bytes are reserved for the store itself.
const kindNamespace byte = 0x01

// What a key inside a namespace holds, the byte after the owner.
const (
	subLog  byte = 'l' // interaction: uvarint(len chat) | chat | seq
	subKV   byte = 'k' // plain key-value: key
	subChat byte = 'c' // chat index, used under the hub's prefix only
	subMem  byte = 'm' // long-term memory: summaries, entities, records
	// subActive: when the hub last logged a turn of a chat, under the
	// hub's prefix only; written every turn, so it sorts after the rest
	// of the namespace, never its first key.
	subActive byte = 'u'
)

// What a long-term key holds, the byte after subMem (or after a record's
// app name).
const (
	memSummary byte = 's' // summary: chat
	memEntity  byte = 'e' // entity: key
	memRecord  byte = 'r' // the hub's record of a spoke: uvarint(len app) | app | memSummary/memEntity ...
)

const (
	hubOwner = "hub"
	seqLen   = 8
)

var ownerRE = regexp.MustCompile(`^(hub|spoke/[a-z0-9][a-z0-9_-]{0,62})$`)

func validOwner(owner string) error {
	if !ownerRE.MatchString(owner) {
		return fmt.Errorf("invalid memory owner %q: want \"hub\" or \"spoke/<app>\"", owner)
	}
	return nil
}

// ownerPrefix is 0x01 | len(owner) | owner. Owners are at most 69 bytes, so
// one length byte suffices, and it makes the prefixes of distinct owners
// never prefixes of one another.
func ownerPrefix(owner string) []byte {
	b := make([]byte, 0, 2+len(owner)+1)
	b = append(b, kindNamespace, byte(len(owner)))
	return append(b, owner...)
}

// sub returns prefix | kind as a fresh slice with room for more.
func sub(prefix []byte, kind byte, extra int) []byte {
	b := make([]byte, 0, len(prefix)+1+extra)
	b = append(b, prefix...)
	return append(b, kind)
}

// chatLogPrefix is the prefix of all interactions of one chat in a namespace.
func chatLogPrefix(prefix []byte, chat string) []byte {
	b := sub(prefix, subLog, binary.MaxVarintLen64+len(chat)+seqLen)
	b = binary.AppendUvarint(b, uint64(len(chat)))
	return append(b, chat...)
}

// logKey is the key of one interaction given its chat's log prefix.
func logKey(chatPrefix []byte, seq uint64) []byte {
	b := make([]byte, 0, len(chatPrefix)+seqLen)
	b = append(b, chatPrefix...)
	return binary.BigEndian.AppendUint64(b, seq)
}

// seqOf reads the sequence number from the end of an interaction key.
func seqOf(key []byte) uint64 {
	return binary.BigEndian.Uint64(key[len(key)-seqLen:])
}

// lastKeyOf is a key no smaller than any key of the chat, for reverse seeks.
func lastKeyOf(chatPrefix []byte) []byte {
	return logKey(chatPrefix, ^uint64(0))
}

func kvKey(prefix []byte, key string) []byte {
	b := sub(prefix, subKV, len(key))
	return append(b, key...)
}

// recordHead is prefix | 'm' | 'r' | uvarint(len app) | app.
func recordHead(prefix []byte, app string) []byte {
	b := sub(prefix, subMem, 1+binary.MaxVarintLen64+len(app))
	b = append(b, memRecord)
	b = binary.AppendUvarint(b, uint64(len(app)))
	return append(b, app...)
}

func chatKey(id string) []byte {
	b := sub(ownerPrefix(hubOwner), subChat, len(id))
	return append(b, id...)
}

func chatIndexPrefix() []byte { return sub(ownerPrefix(hubOwner), subChat, 0) }

// activeKey is the key of chat id's last activity in the hub's namespace.
func activeKey(id string) []byte {
	b := sub(ownerPrefix(hubOwner), subActive, len(id))
	return append(b, id...)
}

// ownerAt returns the owner prefix of a namespace key, or nil if the key is
// not a well-formed namespace key.
func ownerAt(key []byte) []byte {
	if len(key) < 2 || key[0] != kindNamespace || len(key) < 2+int(key[1]) {
		return nil
	}
	return key[:2+int(key[1])]
}

// afterPrefix is the smallest key greater than every key with prefix p, or
// nil if there is none.
func afterPrefix(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
