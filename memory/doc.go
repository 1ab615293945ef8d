// Package memory owns bulkhead's one badger v4 database, kept under the data
// directory, and splits it into namespaces: one for the hub ("hub") and one
// per spoke ("spoke/<app>"). It stores each owner's interaction log, a small
// key-value space (an app's own data, the hub's grants and action log), each
// owner's long-term memory — a summary per chat and entity facts — and the
// hub-owned index of chats. It imports nothing else of bulkhead's.
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
//	prefix | 'm' | 's' | chat                                            summary of a chat
//	prefix | 'm' | 'e' | key                                             entity
//	hub prefix | 'm' | 'r' | uvarint(len(app)) | app | 's'|'e' | …       the hub's record of a spoke
//	hub prefix | 'c' | chat id                                           chat (hub only)
//	hub prefix | 'u' | chat id                                           chat's last activity (hub only)
//
// Values are JSON, but for a chat's last activity: Unix nanoseconds, 8
// bytes big-endian. The length-prefixed chat keeps "c1" from matching "c10",
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
// # Long-term memory
//
// [Namespace.LongTerm] is the owner's own summaries ([Summary], one per chat,
// with the Seq of the last interaction it covers, so an update can pick up
// where the last one stopped) and entities ([Entity]: key → value with
// source, chat, labels and time; at most [MaxEntities], the oldest dropped).
// They live under 'm', which the plain Get/Set/Keys — the only view an app
// is given — cannot reach. Only the hub's namespace has records
// ([Namespace.Record]): its own copy of one spoke's summaries and entities,
// apart from the hub's own. What is stored here is stored as given: masking
// instruction-like text (invariant 7) is the caller's job, done before.
//
// Forgetting: [Store.DeleteOwner] deletes a spoke's whole namespace;
// [LongTerm.Clear] one owner's long-term memory (or one record);
// [Store.DeleteChat] also deletes every summary of the chat and the entities
// extracted from it, in every namespace. These three forget for good: no
// version of what they delete stays in any file of the data directory,
// which a scan of the files (badger's compressed tables decoded) shows
// (purge.go: badger's DropPrefix, which flushes the memtable and rewrites
// the tables that hold the keys). It costs more than a delete: about 0.1
// to 0.3 s with 1,000 to 100,000 other turns in the database on a 2-core
// machine, during which the store takes no other read or write
// (BenchmarkDeleteChat). [Namespace.Remove] deletes one interaction
// (a tombstone: the next compactions drop it). [Scratch] is a namespace's key-value space with an in-memory
// overlay: it reads through and never writes (a private turn's broker).
//
// # Concurrency
//
// All methods of [Store], [Namespace], [LongTerm] and [Scratch] are safe for
// concurrent use; each write is one transaction (PutEntities writes all its
// entities in one). The hub's background summariser writes long-term memory
// while turns append to logs; they touch different keys and never conflict.
// [Namespace.Append] assigns the next sequence number of (namespace, chat)
// under a lock striped by that pair, so concurrent Appends get unique,
// consecutive numbers; writes that touch the same chat from different
// namespaces are retried when badger reports a conflict. Writes are synced
// before they return (a store opened with [Open] survives kill -9).
//
// [Open] starts one goroutine, owned by the Store, that runs value-log GC
// every [Options.GCInterval] and looks at the LSM tree's level 0 every
// [Options.CompactInterval]; [Store.Close] stops it, waits for it, and
// then closes the database. Calls made after Close return [ErrClosed]. An
// ephemeral store ([OpenEphemeral]) keeps everything in memory, writes no
// files and runs no goroutine.
//
// # Staying compact under short processes
//
// badger flushes a process's memtable at Close as one small level-0
// table. Its own compactors merge level 0 once it holds NumLevelZeroTables
// (5) tables, but they start up to a second after Open and Close stops
// them, so a stream of short processes — `bulkhead ask` from a script —
// left one table file per process, never merged (400 asks, 400 files, and
// an ask 1.76× as slow as on a fresh directory: Open opens every table and
// every read merges them all). So the Store compacts itself: when level 0
// holds [Options.CompactTables] (8) tables or more, at Close and at the
// ticker, it calls badger's DB.Flatten, which merges level 0 into the
// level below (and, while more than one level below holds tables, those
// into the last), dropping superseded versions of rewritten keys. After a
// Close level 0 holds 1 to CompactTables tables, whatever the number of
// processes. DB.Levels gives the count; nothing is tuned in badger itself.
//
// The cost is a rewrite of the tree, which for a personal assistant's
// tree (about 1 MB per 1,000 turns) is tens of milliseconds; it falls on
// one Close in CompactTables, and only in processes too short for badger's
// own compactors (a process that lives past a second or so finds level 0
// merged already). At the ticker in a long process it is a backstop: with
// badger's compactors running it rarely finds work. Not chosen:
// CompactL0OnClose, which compacts at every Close, so every ask would pay
// for a rewrite; a lower NumLevelZeroTables, which changes nothing when
// the compactors never start; ValueThreshold, since every value here is
// below it and lives in the tables. NumVersionsToKeep is badger's default
// of 1, but superseded versions go only when a compaction reaches them,
// which is why no scan meets a key rewritten every turn: the chat record
// (see [Chat]) is written when a chat is made or renamed, and the time of
// its last turn, which is written every turn, is only ever read by a
// lookup that goes straight to the newest version.
//
// badger's own log is routed to [Options.Logger]; badger never writes to the
// terminal.
package memory
