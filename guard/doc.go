// Package guard finds instruction-like text — text that addresses a model
// instead of describing the world — in whatever an app authored, so that
// the hub can warn about it in a dialog and mask it before anything derived
// from an app is stored in memory (DESIGN.md §3, invariant 7). It imports
// nothing else of bulkhead's.
//
// It is a second line. The bulkheads — typed values across them, the
// planner reading no app text, a dialog for every cross-app flow — are
// what keep an app from steering anything; no property of bulkhead may
// depend on guard finding everything, and it does not try to: it finds the
// common ways of writing an order to a model, and the common ways of
// hiding one from a pattern.
//
// # What it finds
//
// [Find] is deterministic: a fixed list of rules, each with a kind name
// shown to the user.
//
//   - "addresses the assistant": "Hello assistant, …", "AI:", "a note to
//     the model", "the assistant must …", "you now obey …", "you are now
//     in developer mode";
//   - "overrides instructions": "ignore / disregard / forget … previous
//     instructions", "do not follow your … rules", and the same written
//     as one word ("#ignoreallpreviousinstructions");
//   - "claims a role": a "system:", "assistant:" or "developer:" line,
//     however it is dressed in markdown ("**System:**", "__System__:",
//     "> System:", "- system:", "### System", "[system]", "(developer)"),
//     "SYSTEM PROMPT:", and chat-template tokens (<|im_start|>, [INST],
//     <<SYS>>, <system>, <|start_header_id|>, <start_of_turn>);
//   - "tool-call syntax": <tool_call>, "function_call":, request_functionality(;
//   - "prompt delimiter": "### new instructions", "=== system", "end of
//     the system prompt";
//   - "standing order": "from now on …", "for all future sessions", "always
//     CC / BCC / forward / include …";
//   - "adaptive phrase": "there are no conflicting instructions";
//   - "directs an action": "send / forward / email … to addr@host". This kind
//     is reported (it belongs in a dialog's warning) but not masked: it also
//     matches an app's honest report of what it did ("sent the email to
//     bob@example.com"), which memory should keep.
//
// The rules read a normalised copy of the text, and each finding is mapped
// back: Start, End and Text locate it in the text as given. Normalising
// undoes what hides an order from a pattern and not from a model:
// compatibility forms (fullwidth, mathematical, circled letters: the
// decomposition NFKC applies), accents, look-alike letters from other
// scripts (Cyrillic а е о р с х у і ѕ ј, Greek ο α ε ι κ ν ρ τ υ, small
// capitals), invisible characters inside words (zero-width characters,
// soft hyphens, bidi controls, variation selectors, terminal escapes),
// tag characters that spell ASCII unseen, letters spaced out one by one
// ("i g n o r e", "I.g.n.o.r.e", "i-g-n-o-r-e"), and runs of blanks. A
// run of base64 (standard or URL alphabet) or hex at least 16 characters
// long that decodes to text is scanned too, one level deep, and what is
// found there is reported over the whole run, its kind marked as encoded:
// "overrides instructions (base64)". Binary data (a digest, a key, an
// image) does not decode to text and is left alone. No rule matches
// across a line break.
//
// # How it masks
//
// [Mask] replaces spans, never a whole answer. Each finding is widened to
// the sentence that holds it — a sentence ends at '.', '!' or '?' (a
// closing quote or bracket may follow) before a blank, at an ideographic
// stop, or at a line break, so "evil.example" does not end one — but
// never past a line break, never over an earlier marker, and never more
// than a few hundred bytes either side (a long line with no sentence end,
// such as a JSON value, keeps the rest). Overlapping spans merge; each is
// replaced by a [Marker] that names its kinds: "[masked: overrides
// instructions]". The other sentences of an answer stay. Masking is
// idempotent: a marker names only kinds, and no marker matches a rule. A
// marker that holds instruction-like text is not trusted as one: it is
// read like the rest. [IsMasked] and [Markers] recognise every marker,
// including the "[masked: instruction-like text]" of earlier versions.
//
// # Detectors
//
// [Detector] is what a caller masks with; [Rules] is the deterministic
// detector and the default. A second opinion (a model asked for the
// instruction-like spans of a text) can be added with [Chain]: a detector
// may only add spans that occur verbatim in the text, so a wrong or
// hostile answer can mask more but never unmask what the rules found.
//
// # Cost
//
// Find and Mask take time and memory linear in the text: a rule is tried
// only where its first word (or a line start, or its first byte) occurs,
// anchored there and on a bounded window, and a span is widened within a
// bounded reach. Rules.Detect looks at its context between passes and
// every 64 KiB as it reads, and returns what it found so far with the
// context's error. A megabyte takes tens of milliseconds.
//
// Everything here is stateless and safe for concurrent use.
package guard
