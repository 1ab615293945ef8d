package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulkhead-dev/bulkhead/changes"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// start runs the command in its own process group, talking over pipes
// that this side owns (so waiting for the process never cuts off a reply
// still in a pipe). The folders it may write, it writes through layers
// of its own, made for owner and held while it runs.
func (c *conn) start(cfg Server, net []sandbox.Endpoint, owner changes.Owner) (sdk.Transport, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	pol, exe, err := policy(cfg)
	pol.Net = net
	if err == nil {
		err = c.stage(&pol, cfg.Changes, owner)
	}
	var cmd *exec.Cmd
	cleanup := func() {}
	if err == nil {
		cmd, cleanup, err = sandbox.Command(context.Background(), pol, cfg.Dir, exe, cfg.Args...)
	}
	if err != nil {
		c.unstage()
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	stderr := &stderrLog{gate: c.gate, private: c.private}
	cmd.Stderr = stderr
	c.stderr = stderr
	if pol.Unconfined {
		cmd.WaitDelay = time.Second // a grandchild holding stderr cannot block Wait
	}
	c.sandboxed = !pol.Unconfined
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		cleanup()
		c.unstage()
		inW.Close()
		outR.Close()
		return nil, err
	}
	c.cmd, c.exited = cmd, make(chan struct{})
	for _, l := range c.layers {
		c.changes.Hold(l.ID, func() {
			why := whyChanges
			c.ended.CompareAndSwap(nil, &why)
			c.kill()
		})
	}
	c.log.Info("started MCP server", "pid", cmd.Process.Pid, "command", exe, "sandboxed", c.sandboxed)
	go func() {
		c.exitErr = cmd.Wait()
		// Its last line, even one without a newline, is kept and logged
		// before anyone hears that it exited.
		stderr.flush()
		cleanup()
		c.unstage()
		c.log.Info("MCP server exited", "pid", cmd.Process.Pid, "status", fmt.Sprint(c.exitErr))
		close(c.exited)
	}()
	return &watched{c: c, t: &sdk.IOTransport{Reader: &limited{r: outR, c: c}, Writer: inW, MaxLineLength: -1}}, nil
}

// stage gives each folder pol lets the server write a layer of its
// own; without a store, they are read-only to it.
func (c *conn) stage(pol *sandbox.Policy, store *changes.Store, owner changes.Owner) error {
	if store == nil || pol.Unconfined || len(pol.ReadWrite) == 0 {
		return nil
	}
	c.changes = store
	pol.Layers = map[string]sandbox.Overlay{}
	for _, d := range pol.ReadWrite {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			// The likeliest first start of all: the folder is not made yet.
			return &FolderError{App: c.app, Folders: []string{d}}
		}
		l, err := store.New(owner, d)
		if err != nil {
			return fmt.Errorf("a layer for %s: %w", d, err)
		}
		c.layers = append(c.layers, l)
		pol.Layers[d] = l.Overlay()
	}
	pol.Deny = append(slices.Clone(pol.Deny), store.Root())
	return nil
}

// unstage lets go of the layers once the process has ended: a layer it
// wrote nothing in goes, the others wait, as change sets, for the
// person.
func (c *conn) unstage() {
	for _, l := range c.layers {
		c.changes.Release(l.ID)
		c.changes.Drop(l)
	}
	c.layers = nil
}
