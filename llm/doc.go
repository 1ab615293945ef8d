// Package llm is bulkhead's model layer: a thin client over the Ollama API
// (github.com/ollama/ollama/api) that every owner of a model — the hub's
// planner and each spoke — builds from its own configuration, so that two
// spokes can run different models on different Ollama hosts.
//
// A Client streams chat answers, asks for structured output with a `format`
// JSON schema, passes tools and thinking through, and records the token
// counts and durations of every call in the returned Response. Failures are
// typed so that callers can decide on them:
//
//   - *UnreachableError: nothing answers at the host (see EnsureServer);
//   - *ModelMissingError: the host answers but does not have the model
//     (callers offer Pull);
//   - *StreamCutError: the stream ended before Ollama said it was done; the
//     partial answer travels with the error so it is never lost.
//
// A Client is safe for concurrent use. Every method takes a context and
// returns when it ends; no method starts a goroutine that outlives it, except
// EnsureServer's child process, which the returned *Server owns.
package llm
