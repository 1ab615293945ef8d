// Package permissions owns every permission decision in bulkhead: the kinds
// of request (exec, select, data, collab, irreversible, network), the answers
// a dialog may give, grants and their caveats, the user's rules, the signed
// store of permanent grants, and the action log. It imports nothing else of
// bulkhead's; the hub hands it its memory namespace through the small [KV]
// interface and a [Prompter] (the TUI dialog, or a headless [Policy]).
//
// # Deciding a request
//
// [Broker.Request] rejects a malformed request before anyone sees it: an
// unknown kind, no subject, arguments that are not JSON, and — invariant 2 —
// a collab, data or irreversible request without the hub's Warning. It then
// walks a chain of layers, in the manner of consul's chained authorizer:
// each layer allows, denies, says "ask", or has no opinion and passes to the
// next. The first word wins:
//
//  1. a deny rule                             → denied   (SourceRule)
//  2. a deny grant (a remembered "deny")      → denied   (SourceGrant)
//  3. an ask rule                             → ask the Prompter
//  4. an allow rule                           → allowed  (SourceRule)
//  5. a grant: session, stored or config,     → allowed  (SourceGrant)
//     whose caveats hold
//  6. trusted-session mode ([Broker.SetTrusted]) → allowed (SourcePolicy)
//     and the request is routine ([Request.Routine]: the hub judged it
//     expected, it is reversible, and it carries no [Concern])
//  7. nothing spoke                           → ask the Prompter (SourceUser,
//     or SourcePolicy for a Prompter that asks no one)
//
// A grant whose caveats do not hold (expired, uses spent, arguments outside
// its constraints) is skipped, so the request goes on down the chain and the
// user is asked again. Using a grant counts a use: Uses and LastUsed, and
// UsesLeft down; a stored grant is re-signed and rewritten, and a grant whose
// last use is spent is removed (UsesLeft 0 means unlimited). With no
// Prompter, a request that needs asking is denied with SourcePolicy.
//
// # Irreversible requests (invariant 3)
//
// A request of KindIrreversible, or with Irreversible set, skips layers 4,
// 5 and 6: no grant and no allow rule can decide it, so it is put to the Prompter
// every time, with its exact arguments; a deny rule still denies it.
// [Request.Options] offers it only once and deny; a Prompter answering
// session or permanent gets once, and a "remember this deny" is not
// remembered. Config cannot get around this either: [ValidateRules] (and so
// [NewBroker]) rejects an allow rule whose kind pattern could match
// "irreversible", and [Broker.AddConfigGrant] refuses a grant of that kind,
// each naming where in the config the offender is.
//
// # Answers and grants
//
// Once decides this request only. Session makes an in-memory grant that
// dies with the Broker. Permanent makes a signed grant, written to the Store
// before Request returns; with no Store (private mode) it makes a session
// grant instead, since nothing may persist. A deny with Decision.Permanent
// makes a deny grant the same way. The grant's scope is the request's kind,
// subject, object and function, with the caveats the Prompter returned,
// and the data labels the request carried ([Request.Labels]): an allow
// grant covers a later request only while its labels are among the
// grant's, so a grant given for sharing personal data never covers
// medical data. A request with NoPermanent (a choice among apps that an
// app's request caused) is not offered permanent; a permanent answer to
// it is taken as once.
//
// # Signing (invariant 8)
//
// Stored grants live in the Store under grants/<id> as JSON, each with Sig:
// the hex HMAC-SHA256, under the key in Options.KeyFile, of a canonical
// encoding — a domain string, then ID, Kind, Subject, Object, Function, Deny,
// Note, Permanent, Origin, Created, and the caveats (Expires, UsesLeft, Args
// sorted by name), then the Labels when there are any, then Gen (so grants signed
// before labels existed still verify), each length-prefixed. Sig, LastUsed and Uses are not
// covered: they are bookkeeping that changes on every use and grants
// nothing. UsesLeft is covered, so each use re-signs the grant. The key is 32
// random bytes made on first use, written to a temporary file and linked into
// place with mode 0600 (its directory 0700); an existing key file that group
// or others may read or write is refused ([ErrKeyMode]), since grants signed
// with it cannot be trusted. When the Broker is built, a stored grant that
// does not parse, does not verify, or sits under another grant's key is kept
// with Invalid set, logged, listed by [Broker.Grants] and [Broker.Invalid],
// and never consulted; [Broker.Revoke] deletes it. Signing stops edits to the
// store (widening a grant, lifting a caveat). A grant's earlier bytes, which
// still verify, are stopped by the ledger (ledger.go): every write of a
// stored grant carries the next generation (Gen, signed), the ledger keeps
// each grant's current generation or that it ended (spent, revoked), and a
// grant whose generation is not the ledger's is kept invalid. Neither stops
// someone who can read the key file, nor a whole older copy of the store.
// Config grants are not stored and so not signed: config is read afresh on
// every start.
//
// # Action log
//
// Every request is appended with its decision, whoever decided it (rule,
// grant, user or policy), as is a request that got no answer (its ctx ended,
// the Prompter failed) and the notes the hub adds with [Broker.Note]. Entries
// are numbered in the order they are written and stored under
// actions/<20-digit seq>, or kept in memory with no Store. A decision that
// cannot be logged is not returned: Request returns an error instead, and
// callers treat any error as a denial.
//
// # Concurrency
//
// A Broker is safe for concurrent use. Rules and grants are checked under
// one mutex, held briefly (including the Store write a grant's use needs),
// never while anyone is asked. Prompts are serialized: one Prompt call runs
// at a time, and the others wait in arrival order; [Broker.Pending] counts
// the waiting and the showing. When a request gets its turn the chain is run
// again, so a session grant made by the answer before it decides it without
// a second dialog. Every wait honours the request's ctx (invariant 9): a
// waiter whose ctx ends leaves the queue and Request returns ctx.Err(). The
// Prompt call runs in a goroutine owned by the Broker; Request returns at
// ctx's end even if a faulty Prompter does not, and that goroutine keeps the
// prompt turn until the Prompter returns, so no second dialog opens over a
// stuck one. An answer that arrives after ctx ended is dropped.
package permissions
