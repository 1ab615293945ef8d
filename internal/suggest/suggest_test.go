package suggest_test

import (
	"slices"
	"testing"

	"github.com/bulkhead-dev/bulkhead/internal/suggest"
)

func TestClosest(t *testing.T) {
	cmds := []string{"/help", "/model", "/memory", "/private", "/permissions"}
	for _, c := range []struct {
		word   string
		prefix bool
		want   []string
	}{
		{"/mod", true, []string{"/model"}},
		{"/m", true, []string{"/model", "/memory"}},
		{"/modle", true, []string{"/model"}},
		{"/hlep", true, []string{"/help"}},
		{"/zzzzzz", true, nil},
		{"/mod", false, []string{"/model"}},
	} {
		if got := suggest.Closest(c.word, cmds, c.prefix); !slices.Equal(got, c.want) {
			t.Errorf("Closest(%q) = %v, want %v", c.word, got, c.want)
		}
	}
	if d := suggest.Distance("kitten", "sitting"); d != 3 {
		t.Fatalf("Distance = %d", d)
	}
}
