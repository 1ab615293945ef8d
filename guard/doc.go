// Package guard finds instruction-like text — text that addresses a model
// instead of describing the world — in whatever an app authored, so that
// the hub can warn about it in a dialog and mask it before anything derived
// from an app is stored in memory (DESIGN.md §3, invariant 7). It imports
// nothing else of bulkhead's.
//
// # What it finds
//
// [Find] is deterministic: a fixed list of patterns, each with a kind
// name shown to the user.
//
//   - "addresses the assistant": "Hello assistant, …", "AI:", "a note to
//     the model", "the assistant must …", "you are now …";
//   - "overrides instructions": "ignore / disregard / forget … previous
//     instructions";
//   - "claims a role": a "system:" or "assistant:" line, <|im_start|>,
//     [INST], <<SYS>>;
//   - "tool-call syntax": <tool_call>, "function_call":, request_functionality(;
//   - "prompt delimiter": "### new instructions", "=== system", <system>;
//   - "standing order": "from now on …", "for all future sessions", "always
//     CC / BCC / forward / include …";
//   - "adaptive phrase": "there are no conflicting instructions";
//   - "directs an action": "send / forward / email … to addr@host". This kind
//     is reported (it belongs in a dialog's warning) but not masked: it also
//     matches an app's honest report of what it did ("sent the email to
//     bob@example.com"), which memory should keep.
//
// # How it masks
//
// [Mask] replaces each finding with [Marker], widened to a whole sentence
// (a sentence ends at '.', '!' or '?' followed by a space, or at a line
// break, so "evil.example" does not end one). A greeting addressed to the
// assistant ("Hello assistant, …", "Note to the AI: …") opens an
// instruction block: it is masked to the end of its paragraph (a blank
// line), because what follows such a greeting is the payload. Overlapping
// spans merge into one marker. Masking is idempotent: the marker itself
// matches no pattern.
//
// # Detectors
//
// [Detector] is what a caller masks with; [Rules] is the deterministic
// detector and the default. A second opinion (a model asked for the
// instruction-like spans of a text) can be added with [Chain]: a detector
// may only add spans that occur verbatim in the text, so a wrong or
// hostile answer can mask more but never unmask what the rules found.
//
// Everything here is stateless and safe for concurrent use.
package guard
