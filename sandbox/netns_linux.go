//go:build linux

package sandbox

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The command's own network (a network namespace): only a loopback
// interface, brought up, with a listener for each granted endpoint. A
// host name is given a loopback address of its own (127.0.0.2, .3, …)
// in the command's /etc/hosts; an IPv4 address is added to the loopback
// interface, so that the command connects to it as it would outside.

// plan is where each endpoint listens inside.
type plan struct {
	addr  []netip.Addr // per endpoint
	hosts string       // the command's /etc/hosts
}

func planNet(eps []Endpoint) plan {
	var p plan
	names := map[string]netip.Addr{"localhost": netip.MustParseAddr("127.0.0.1")}
	next := netip.MustParseAddr("127.0.0.2")
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	for _, e := range eps {
		if a, err := netip.ParseAddr(e.Host); err == nil {
			p.addr = append(p.addr, a)
			continue
		}
		a, ok := names[e.Host]
		if !ok {
			a, next = next, next.Next()
			names[e.Host] = a
			fmt.Fprintf(&b, "%s\t%s\n", a, e.Host)
		}
		p.addr = append(p.addr, a)
	}
	p.hosts = b.String()
	return p
}

// loUp brings the loopback interface up.
func loUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// addLoopback adds a to the loopback interface (netlink RTM_NEWADDR).
func addLoopback(a netip.Addr) error {
	if a.IsLoopback() {
		return nil // 127.0.0.0/8 is the loopback's already
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ip := a.As4()
	attr := func(typ uint16, v []byte) []byte {
		b := make([]byte, 4, 8)
		binary.NativeEndian.PutUint16(b[0:], uint16(4+len(v)))
		binary.NativeEndian.PutUint16(b[2:], typ)
		return append(b, v...)
	}
	body := []byte{unix.AF_INET, 32, 0, unix.RT_SCOPE_HOST, 0, 0, 0, 0} // ifaddrmsg
	binary.NativeEndian.PutUint32(body[4:], 1)                          // lo is interface 1 in a new namespace
	body = append(body, attr(unix.IFA_LOCAL, ip[:])...)
	body = append(body, attr(unix.IFA_ADDRESS, ip[:])...)
	msg := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(unix.NLMSG_HDRLEN+len(body)))
	binary.NativeEndian.PutUint16(msg[4:], unix.RTM_NEWADDR)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	binary.NativeEndian.PutUint32(msg[8:], 1)
	msg = append(msg, body...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return err
	}
	if n >= unix.NLMSG_HDRLEN+4 && binary.NativeEndian.Uint16(buf[4:]) == unix.NLMSG_ERROR {
		if code := int32(binary.NativeEndian.Uint32(buf[unix.NLMSG_HDRLEN:])); code != 0 {
			return unix.Errno(-code)
		}
	}
	return nil
}

// listenInside listens on a:port in the command's network; the socket
// is handed to the launcher outside, which accepts on it.
func listenInside(a netip.Addr, port uint16) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: int(port), Addr: a.As4()}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Listen(fd, 64); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// bindHosts puts content on /etc/hosts in the command's mount namespace
// (a bind mount of a file no one else sees: it is unlinked at once).
func bindHosts(content string) error {
	dir, err := os.MkdirTemp("", "bulkhead-hosts-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	f := filepath.Join(dir, "hosts")
	if err := os.WriteFile(f, []byte(content), 0o444); err != nil {
		return err
	}
	if _, err := os.Stat("/etc/hosts"); err != nil {
		return err
	}
	return unix.Mount(f, "/etc/hosts", "", unix.MS_BIND|unix.MS_RDONLY, "")
}
