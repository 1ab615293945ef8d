package llm

import "testing"

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"localhost": true, "127.0.0.1": true, "[::1]:9": true, "0.0.0.0": true,
		"192.0.2.1": false, "ollama.lan": false, "http://10.1.2.3:11434": false,
	} {
		u, err := ParseHost(host)
		if err != nil {
			t.Fatal(err)
		}
		if got := isLoopback(u); got != want {
			t.Errorf("isLoopback(%s) = %v, want %v", host, got, want)
		}
	}
}
