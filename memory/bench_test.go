package memory

import (
	"fmt"
	"testing"
)

func BenchmarkRecent(b *testing.B) {
	s := openTest(b)
	n := mustNamespace(b, s, "hub")
	seedLog(b, n, "chat", 100_000)
	b.ReportAllocs()
	for b.Loop() {
		got, err := n.Recent("chat", 20)
		if err != nil || len(got) != 20 || got[19].Seq != 100_000 {
			b.Fatalf("Recent = %d items, %v", len(got), err)
		}
	}
}

func BenchmarkAppend(b *testing.B) {
	for _, ephemeral := range []bool{false, true} {
		b.Run(fmt.Sprintf("ephemeral=%v", ephemeral), func(b *testing.B) {
			var s *Store
			if ephemeral {
				s = openEphemeralTest(b)
			} else {
				s = openTest(b)
			}
			n := mustNamespace(b, s, "hub")
			it := Interaction{Input: "what is the weather", Output: "sunny", Status: StatusOK}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := n.Append("chat", it); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
