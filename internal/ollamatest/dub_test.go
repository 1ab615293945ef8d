package ollamatest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
)

// A real server that ends a stream unmarked — Ollama's repeat limit stops
// a model that writes one token 30 times over, with no final message —
// ends the dubbed reply there: the script's words whole, and a final
// message, not a cut stream the client would report.
func TestADubbedReplyEndsWhereTheRealServerStopped(t *testing.T) {
	real := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		enc := json.NewEncoder(w)
		for range 3 {
			_ = enc.Encode(api.ChatResponse{Message: api.Message{Role: "assistant", Content: "S"}})
		}
	}))
	defer real.Close()
	u, _ := url.Parse(real.URL)
	srv := NewScripted(t, func(*api.ChatRequest) Reply { return Pieces(Text("The sea covers most of the planet.")) }, "m")
	srv.Dub(api.NewClient(u, real.Client()), "tiny")
	host, _ := url.Parse(srv.Host())
	var text strings.Builder
	var last api.ChatResponse
	err := api.NewClient(host, http.DefaultClient).Chat(t.Context(), &api.ChatRequest{Model: "m", Messages: userMsg("the sea")}, func(r api.ChatResponse) error {
		text.WriteString(r.Message.Content)
		last = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != "The sea covers most of the planet." || !last.Done {
		t.Fatalf("dubbed %q, done %v", text.String(), last.Done)
	}
}
