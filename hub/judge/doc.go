// Package judge is the hub's judgement: is this call what the user
// meant, where did each of its values come from, and what does a dialog
// say of it. It decides; the hub asks it and acts (the gate puts the
// verdict to the user, the synthesis withholds what it says to withhold).
//
// What "expected" means, in ten lines:
//
//  1. The plan declares it: each step binds its decisive arguments —
//     to a literal of the current request (checked to stand there, with
//     one reading: reading.go), a typed field of an earlier step's
//     result, or a hub entity the plan names (CheckBindings).
//  2. A call is expected only in the step that runs its app, of the
//     function its functionality maps to, once, with every decisive
//     value equal to a binding of that step (ExpectCall); an ISC request
//     only where the plan routes the functionality to the requester's
//     step, and only for reading (ExpectRequest).
//  3. Words of an earlier turn, a value for another step, data an app
//     wrote, a value the user let flow elsewhere: none is a binding.
//  4. Expected is not routine: what a call carries (labels, an app's
//     free text, instruction-like text, a file other programs run) is a
//     concern of its own (Assessment), and irreversible asks every time.
//
// What "the user's" means (reading.go; DESIGN.md invariant 13): a literal
// of the request is the user's value only where the request leaves it one
// reading — it stands there once (or reads alike wherever it stands), no
// other value of its kind stands beside it, and its sentence is one the
// hub positively reads: no parenthesis, quotation or pasted block around
// it, no question but one that asks the assistant, and every word around
// it one of a small closed vocabulary, up to the content. Anything else
// asks, and the dialog shows the user's own sentence; the vocabulary
// decides only what binds as routine — what it lacks asks, it never
// refuses. The Ledger says the same: such a value is doubted, not typed
// by you, so a value the user's words rule out is never the user's.
//
// What "equal" means (equal.go; DESIGN.md invariant 13): each kind of
// value has one rule, and SameValue, inRequest and the Ledger all use it.
// A number equals a number; an address's local part and a URL's path,
// query and fragment compare byte for byte; a domain by IDNA
// (idna.Registration), folding ASCII case alone, a domain written in
// Unicode never equal to its punycode; a path (anything with a slash, a
// file name with an extension) by its bytes — two canonically equivalent
// names are two files, NFC "café.md" is not NFD "cafe\u0301.md"; any
// other text by PRECIS, NFC and nothing else. A value outside plain ASCII
// never equals one in it: no look-alike letter of any script, no
// invisible character, no fullwidth form is what the user typed, and a
// dialog shows such a value with its punycode and code points (Shown).
//
// Everything here is a pure function of its inputs (the request, the
// plan's step, the call, the Ledger of the turn's values, the Values its
// references bind to), with no IO; a Ledger is safe for concurrent use,
// everything else holds no state.
package judge
