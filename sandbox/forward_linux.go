//go:build linux

package sandbox

import (
	"context"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"
)

// maxConns bounds the connections one command has open at once through
// its network grants.
const maxConns = 64

// forwarder carries the connections a command makes in its own network
// to the granted endpoints, each to its own host and port and nowhere
// else; it runs in the launcher, outside the command's namespaces.
type forwarder struct {
	ls     []net.Listener
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func forward(eps []Endpoint, ls map[int]net.Listener) *forwarder {
	ctx, cancel := context.WithCancel(context.Background())
	f := &forwarder{cancel: cancel}
	slots := make(chan struct{}, maxConns)
	for i, l := range ls {
		f.ls = append(f.ls, l)
		to := eps[i].String()
		f.wg.Go(func() {
			for {
				in, err := l.Accept()
				if err != nil {
					return
				}
				select {
				case slots <- struct{}{}:
				default:
					in.Close() // too many at once
					continue
				}
				f.wg.Go(func() {
					defer func() { <-slots }()
					carry(ctx, in, to)
				})
			}
		})
	}
	return f
}

// carry connects to to and copies both ways until both sides are done.
func carry(ctx context.Context, in net.Conn, to string) {
	defer in.Close()
	d := net.Dialer{Timeout: 15 * time.Second}
	out, err := d.DialContext(ctx, "tcp", to)
	if err != nil {
		return
	}
	defer out.Close()
	stop := context.AfterFunc(ctx, func() { in.Close(); out.Close() })
	defer stop()
	var wg sync.WaitGroup
	half := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if c, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		}
	}
	wg.Add(2)
	go half(out, in)
	go half(in, out)
	wg.Wait()
}

// close stops every listener and connection and waits for them.
func (f *forwarder) close() {
	if f == nil {
		return
	}
	for _, l := range f.ls {
		l.Close()
	}
	f.cancel()
	f.wg.Wait()
}

func netipAddr(host string) (netip.Addr, error) { return netip.ParseAddr(host) }
