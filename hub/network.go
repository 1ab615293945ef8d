package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"net"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// netAsker puts the endpoints an out-of-process app's config names to
// the user, as `network` permissions of the turn whose call starts the
// app's process (apps.Network). Only an endpoint allowed here reaches
// the app's sandbox; the rest of the network stays closed to it.
type netAsker struct {
	o  *Operator
	tr *turnRun
}

func (n netAsker) AllowNetwork(ctx context.Context, app, endpoint string) (apps.Lease, bool) {
	d, err := n.o.ask(ctx, n.tr, networkRequest(app, endpoint, n.tr != nil && n.tr.private))
	if err != nil || !d.Allowed {
		return nil, false
	}
	// The access lasts as long as what allowed it (invariant 11): the
	// grant, or the session that answered.
	b := n.o.brokerOf(n.tr)
	if b == nil {
		return nil, false
	}
	return b.Lease(permissions.SessionOf(ctx), d), true
}

// networkRequest is the dialog for one endpoint. What it says is true of
// every such grant: the app could send there whatever it has read, and
// nothing of bulkhead sees what it sends.
func networkRequest(app, endpoint string, private bool) permissions.Request {
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		host, port = endpoint, "?"
	}
	args, _ := json.Marshal(map[string]string{"host": host, "port": port})
	warning := fmt.Sprintf("Network: %s could send anything it has read — the folders its config grants, what it was given in this chat — to %s (port %s), and bulkhead cannot see what it sends. Allow it only if %s needs that host to work.", app, host, port, app)
	if private {
		warning += " This is a private chat: a connection leaves this machine."
	}
	return permissions.Request{
		Kind: permissions.KindNetwork, Subject: app, Object: endpoint, Args: args,
		Detail:   fmt.Sprintf("The %s app's process may connect to %s, port %s, until it stops; its config (mcp.%s.net) names this endpoint, and it reaches no other.", app, host, port, app),
		Warning:  warning,
		Concerns: []permissions.Concern{permissions.ConcernNetwork},
	}
}

// vanillaNetwork is the --vanilla baseline's: every endpoint an app's
// config names is open, with no dialog, and the action log says so.
type vanillaNetwork struct{ broker *permissions.Broker }

func (v vanillaNetwork) AllowNetwork(_ context.Context, app, endpoint string) (apps.Lease, bool) {
	if v.broker == nil {
		return nil, true
	}
	r := networkRequest(app, endpoint, false)
	d, err := v.broker.Record(r, permissions.Decision{Answer: permissions.AnswerOnce, Allowed: true, Source: permissions.SourceVanilla, Note: vanillaWarning})
	if err != nil {
		return nil, false
	}
	return v.broker.Lease("", d), true
}
