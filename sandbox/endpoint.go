package sandbox

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// Endpoint is a host and a TCP port a command may connect to.
type Endpoint struct {
	Host string `json:"host"`
	Port uint16 `json:"port"`
}

// String is host:port ([v6]:port for an IPv6 address).
func (e Endpoint) String() string { return net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))) }

// hostName is a DNS name: labels of letters, digits and hyphens.
var hostName = regexp.MustCompile(`^(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

// ParseEndpoint reads "host:port": a host name or an IPv4 address, and a
// port from 1 to 65535.
func ParseEndpoint(s string) (Endpoint, error) {
	host, port, err := net.SplitHostPort(strings.TrimSpace(s))
	if err != nil {
		return Endpoint{}, fmt.Errorf("%q: want host:port (api.example.com:443)", s)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return Endpoint{}, fmt.Errorf("%q: the port must be a number from 1 to 65535", s)
	}
	e := Endpoint{Host: strings.ToLower(host), Port: uint16(n)}
	return e, e.Valid()
}

// Valid checks the host and the port.
func (e Endpoint) Valid() error {
	if e.Port == 0 {
		return fmt.Errorf("%s: no port", e)
	}
	if a, err := netip.ParseAddr(e.Host); err == nil {
		if !a.Is4() {
			return fmt.Errorf("%s: give an IPv4 address or a host name", e)
		}
		if a.IsUnspecified() || a.IsMulticast() {
			return fmt.Errorf("%s: not an address one connects to", e)
		}
		return nil
	}
	if e.Host == "" || len(e.Host) > 253 || !hostName.MatchString(e.Host) {
		return fmt.Errorf("%s: %q is not a host name", e, e.Host)
	}
	return nil
}

// errNoEndpoint is what a command without the grant gets.
var errNoEndpoint = errors.New("no network grant")
