package judge

import "testing"

// A call's value equals a bound one only as the same value of its kind:
// every other normalisation makes it unexpected, never expected.
func TestEqualityIsExact(t *testing.T) {
	t.Parallel()
	cafeNFC, cafeNFD := "caf\u00e9", "cafe\u0301"
	for _, c := range []struct {
		leaf, bound any
		same        bool
	}{
		{"bob@example.com", "bob@example.com", true},
		{"bob@EXAMPLE.com", "bob@example.com", true}, // a domain's case
		{"bob@example.com.", "bob@example.com", false},
		{" bob@example.com", "bob@example.com", false},
		{"bob@example.com ", "bob@example.com", false},
		{"\"bob@example.com\"", "bob@example.com", false},
		{"mailto:bob@example.com", "bob@example.com", false},
		{"Bob@example.com", "bob@example.com", false}, // a local part's case
		{"bob@example.com", "b@example.com", false},
		{"HTTPS://Shop.Example/Pay", "https://shop.example/Pay", true},
		{"https://shop.example/pay", "https://shop.example/Pay", false},
		{"https://shop.example/pay/", "https://shop.example/pay", false},
		{"./docs/plan.md", "docs/plan.md", false},
		{"docs/plan.md", "docs/plan.md", true},
		{cafeNFD, cafeNFC, true}, // canonical equivalence
		{"Café", cafeNFC, false},
		{"rm -rf  build", "rm -rf build", false},
		{"hello", "hello", true},
		{17.0, "17", true},
		{17.0, "17.0", true},
		{1250.0, "1,250", true},
		{17.0, "$17", false},
		{17.0, " 17", false},
		{"17", 17.0, true},
		{"17 ", 17.0, false},
		{true, true, true},
		{true, "true", false},
	} {
		if got := SameValue(c.leaf, c.bound); got != c.same {
			t.Errorf("SameValue(%q, %q) = %v, want %v", c.leaf, c.bound, got, c.same)
		}
	}
}
