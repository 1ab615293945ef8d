// Package serve is the process that owns a data directory and its
// clients: one `bulkhead serve` holds the store, the grant key, the
// spokes and the MCP servers, and every chat and command on that data
// directory talks to it over a unix socket in it (docs/architecture.md).
//
//   - protocol.go: the methods and the project's types that cross the
//     socket (JSON-RPC 2.0), and the protocol's version;
//   - errors.go: errors as they cross it, typed on both sides;
//   - server.go: the listener, sessions (one a connection), dialogs sent
//     to the client whose turn asked, idleness;
//   - methods.go: what each call does with the engine;
//   - connect.go: finding, starting or replacing the serving process;
//   - client.go: a session's calls, the methods of the hub and the
//     broker that the TUI and the commands use;
//   - socket.go, peer_*.go: the socket's path and mode, same-user peers.
package serve
