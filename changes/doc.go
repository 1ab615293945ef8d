// Package changes owns what an out-of-process app writes into a folder
// it shares with the user (DESIGN.md §3, invariant 10). The app never
// writes the folder itself: in its mount namespace the folder is a
// kernel overlay (package sandbox), the real folder below, read-only,
// and a layer of the app's own above it, kept here, in bulkhead's data
// directory. The upper layer *is* the change set: a whiteout is a
// removal, a copied-up file an edit, a new file an addition.
//
// Read turns a layer into a Set: every path added, changed, removed,
// renamed or re-moded, with a diff for each text file, sizes for the
// rest, git's own data summed up as the commits it makes, and the hub's
// warning on every entry something else may run or trust (warn.go: the
// list there decides only what is warned, never what is shown). Apply
// is bulkhead's own act, outside any sandbox: it writes what the person
// accepted into the real folder, each file atomically, following no
// link, with no set-id bit, no device, fifo or socket, and refuses an
// entry whose file changed underneath since it was shown (a conflict,
// left pending). Discard removes a set whole.
//
// A Layer lives on disk until it is decided — across a crash or a
// restart — so a pending set is never lost: Store.Layers lists them.
// A layer whose process still runs (a server) is held (Store.Hold):
// decided sets of such a layer are remembered as settled, so that what
// was accepted is not asked again while the process keeps its view;
// a discard, or a set accepted only in part, stops the process first
// (its release function), so that what it sees is what the folder holds.
//
// A Store is safe for concurrent use; a Layer is a value; reading and
// applying one layer at a time is the caller's (the hub's gate, one
// spoke's calls at a time).
package changes
