package llm

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// DefaultHost is where Ollama listens unless told otherwise.
const DefaultHost = "http://127.0.0.1:11434"

// ParseHost turns the forms users write for an Ollama host ("localhost",
// "127.0.0.1:11434", "http://box:11434", "https://ollama.example") into a
// base URL. An empty string means DefaultHost.
func ParseHost(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		s = DefaultHost
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("ollama host %q: %w", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("ollama host %q: scheme must be http or https", s)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("ollama host %q: no host name", s)
	}
	if u.Port() == "" {
		port := "11434"
		if u.Scheme == "https" {
			port = "443"
		}
		u.Host = net.JoinHostPort(u.Hostname(), port)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	return u, nil
}

// isLoopback reports whether the host is on this machine, where starting
// `ollama serve` ourselves makes sense.
func isLoopback(u *url.URL) bool {
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}
