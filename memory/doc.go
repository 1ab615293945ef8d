// Package memory owns bulkhead's one badger v4 database, kept under the data
// directory, and splits it into namespaces: one for the hub ("hub") and one
// per spoke ("spoke/<app>"). It stores each owner's interaction log, a small
// key-value space for each owner's later summaries, entities and grants, and
// the hub-owned index of chats. It imports nothing else of bulkhead's.
//
// # Key layout
//
// Every key of a namespace begins with the owner's prefix
//
//	0x01 | len(owner) (1 byte) | owner
//
// Because the owner is length-prefixed, no owner's prefix is a prefix of
// another's ("spoke/a" and "spoke/ab" differ in the length byte). One byte
// after the owner says what the key holds:
//
//	prefix | 'l' | uvarint(len(chat)) | chat | seq (8 bytes, big-endian)  interaction
//	prefix | 'k' | key                                                   plain key-value
//	hub prefix | 'c' | chat id                                           chat (hub only)
//
// Values are JSON. The length-prefixed chat keeps "c1" from matching "c10",
// and big-endian sequence numbers sort in numeric order, so one chat's log is
// one contiguous, ordered key range that can be read forwards or backwards.
// Key bytes outside the 0x01 kind are reserved for the store itself.
//
// # Confinement
//
// A [Namespace] is the only handle a hub or spoke gets. It has no exported
// fields and no way to reach the database or to name another owner: every key
// it reads or writes is built as its own prefix followed by a kind byte and
// the caller's bytes, so no key, however crafted (separators, 0x01 bytes,
// another owner's name), can leave its prefix. A namespace's plain keys live
// under 'k' and can't touch its log or, for the hub, the chat index; chats are
// only reached through [Store]'s chat methods.
//
// # Concurrency
//
// All methods of [Store] and [Namespace] are safe for concurrent use.
// [Namespace.Append] assigns the next sequence number of (namespace, chat)
// under a lock striped by that pair, so concurrent Appends get unique,
// consecutive numbers; writes that touch the same chat from different
// namespaces are retried when badger reports a conflict. Writes are synced
// before they return (a store opened with [Open] survives kill -9).
//
// [Open] starts one goroutine, owned by the Store, that runs value-log GC
// every [Options.GCInterval]; [Store.Close] stops it, waits for it, and then
// closes the database. Calls made after Close return [ErrClosed]. An
// ephemeral store ([OpenEphemeral]) keeps everything in memory, writes no
// files and runs no GC goroutine.
//
// badger's own log is routed to [Options.Logger]; badger never writes to the
// terminal.
package memory
