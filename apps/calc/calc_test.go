package calc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/appstest"
)

func eval(t testing.TB, a *App, expr string) (result, json.RawMessage, error) {
	args, _ := json.Marshal(map[string]string{"expression": expr})
	out, err := a.Call(context.Background(), apps.Call{Function: "evaluate", Args: args})
	if err != nil {
		return result{}, nil, err
	}
	var r result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("result %s: %v", out, err)
	}
	return r, out, nil
}

func TestManifest(t *testing.T) {
	if err := New().Manifest().Check(apps.Default()); err != nil {
		t.Fatal(err)
	}
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, result, exact string }{
		{"1+2", "3", ""},
		{"0.1+0.2", "0.3", ""},
		{"1/3*3", "1", ""},
		{"2+3*4", "14", ""},
		{"(2+3)*4", "20", ""},
		{"10-4-3", "3", ""},      // left-associative
		{"64/4/2", "8", ""},      // left-associative
		{"2^3^2", "512", ""},     // right-associative
		{"(2^3)^2", "64", ""},    //
		{"-2^2", "-4", ""},       // ^ binds tighter than unary minus
		{"(-2)^2", "4", ""},      //
		{"2^-2", "0.25", ""},     // negative exponent
		{"2**10", "1024", ""},    // ** is ^
		{"--3", "3", ""},         //
		{"-+-3", "3", ""},        //
		{"3*-2", "-6", ""},       //
		{"2*3^2", "18", ""},      //
		{" 1.50 + .5 ", "2", ""}, //
		{"5.", "5", ""},          //
		{"1e3", "1000", ""},
		{"1.5E-3", "0.0015", ""},
		{"1e+2*2", "200", ""},
		{"50%", "0.5", ""},
		{"200*15%", "30", ""},
		{"(1+1)%", "0.02", ""},
		{"0^0", "1", ""},
		{"7÷2×3 − 1", "9.5", ""},
		{"1/8", "0.125", ""},
		{"1/1024", "0.0009765625", ""},
		{"-7/4", "-1.75", ""},
		{"1/3", "0.33333333333333333333", "1/3"},
		{"2/3", "0.66666666666666666667", "2/3"},
		{"-1/3", "-0.33333333333333333333", "-1/3"},
		{"10/3", "3.3333333333333333333", "10/3"},
		{"1/7", "0.14285714285714285714", "1/7"},
		{"1/300000", "0.0000033333333333333333333", "1/300000"},
		{"1/3000000", "3.3333333333333333333e-7", "1/3000000"},
		{"10^19/3", "3333333333333333333.3", "10000000000000000000/3"},
		{"10^20/3", "33333333333333333333", "100000000000000000000/3"},
		{"10^21/3", "3.3333333333333333333e+20", "1000000000000000000000/3"},
		{"(10^20+1)/(3*10^20)", "0.33333333333333333334", "100000000000000000001/300000000000000000000"},
		{"(3*10^20-1)/(3*10^20)", "1", "299999999999999999999/300000000000000000000"}, // rounds up to the next power of ten
		{"2^64", "18446744073709551616", ""},
		{"2^-20", "0.00000095367431640625", ""},
		{"99999999999999999999999999*99999999999999999999999999", "9999999999999999999999999800000000000000000000000001", ""},
	}
	a := New()
	for _, tt := range tests {
		r, out, err := eval(t, a, tt.expr)
		if err != nil {
			t.Errorf("%q: %v", tt.expr, err)
			continue
		}
		if r.Result != tt.result || r.Exact != tt.exact || r.Expression != tt.expr {
			t.Errorf("%q = %+v, want result %q exact %q", tt.expr, r, tt.result, tt.exact)
		}
		appstest.CheckResult(t, a, "evaluate", out)
	}
}

func TestHugeNumbers(t *testing.T) {
	t.Parallel()
	a := New()
	r, _, err := eval(t, a, "2^10000")
	if err != nil || len(r.Result) != 3011 || !strings.HasPrefix(r.Result, "19950631168807583848") || !strings.HasSuffix(r.Result, "596709376") {
		t.Errorf("2^10000 = %.30s… (%d digits), %v", r.Result, len(r.Result), err)
	}
	r, _, err = eval(t, a, "10^1000+1-10^1000")
	if err != nil || r.Result != "1" {
		t.Errorf("10^1000+1-10^1000 = %q, %v", r.Result, err)
	}
	r, _, err = eval(t, a, "0.5^10000*2^10000")
	if err != nil || r.Result != "1" {
		t.Errorf("0.5^10000*2^10000 = %q, %v", r.Result, err)
	}
	r, _, err = eval(t, a, "1/3^1000")
	if err != nil || !strings.HasSuffix(r.Result, "e-478") || r.Exact == "" {
		t.Errorf("1/3^1000 = %q, %v", r.Result, err)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		{"", "the expression is empty"},
		{"   ", "the expression is empty"},
		{strings.Repeat("1+", 500) + "1", "longer than 1000 characters"},
		{"1/0", "division by zero at position 2"},
		{"1/(2-2)", "division by zero at position 2"},
		{"3 + 4/(1-1)", "division by zero at position 6"},
		{"0^-1", "division by zero (0 to a negative power) at position 2"},
		{"1+", "expected a number, found the end of the expression at position 3"},
		{"1+*2", `expected a number, found '*' at position 3`},
		{"(1+2", "missing ')' for the '(' at position 1"},
		{"1+2)", `unexpected ')' at position 4`},
		{"(1 2)", `unexpected '2' at position 4`},
		{"2(3)", `unexpected '(' at position 2`},
		{"5 % 3", `unexpected '3' at position 5`},
		{"x+1", `expected a number, found 'x' at position 1`},
		{"1.2.3", `unexpected '.' at position 4`},
		{"1e", "expected the digits of an exponent at position 3"},
		{"1e99999", "exponent of this number is larger than 10000 at position 1"},
		{"1e-10001", "exponent of this number is larger than 10000 at position 1"},
		{"2^0.5", "the exponent must be a whole number at position 2"},
		{"2^10001", "the exponent is larger than 10000 at position 2"},
		{"9^9^9", "the exponent is larger than 10000 at position 2"},
		{"(10^10000)^10000", "the result is too large at position 11"},
		{"(3^9999)^2^4", "the result is too large at position 9"},
		{strings.Repeat("(3^9999)*", 10) + "1", "the result is too large"},
		{"1/(" + strings.Repeat("7^9999*", 6) + "1)", "the result is too large"},
		{"é", `expected a number, found 'é' at position 1`},
	}
	a := New()
	for _, tt := range tests {
		if _, _, err := eval(t, a, tt.expr); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%.40q error = %v, want %q", tt.expr, err, tt.want)
		}
	}
	for _, c := range []struct{ fn, args, want string }{
		{"solve", `{"expression":"1"}`, `no function "solve"`},
		{"evaluate", `{}`, "arguments"},
		{"evaluate", `{"expression":1}`, "arguments"},
		{"evaluate", `{"expression":"1","precision":5}`, "arguments"},
	} {
		if _, err := a.Call(context.Background(), apps.Call{Function: c.fn, Args: json.RawMessage(c.args)}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s(%s) error = %v, want %q", c.fn, c.args, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Call(ctx, apps.Call{Function: "evaluate", Args: json.RawMessage(`{"expression":"1"}`)}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
}

// TestWorstCaseIsQuick evaluates expressions built to be slow and wants
// each to finish quickly, with a result or an error.
func TestWorstCaseIsQuick(t *testing.T) {
	t.Parallel()
	exprs := []string{
		strings.Repeat("(", 330) + "1" + strings.Repeat(")", 330),
		strings.Repeat("-", 999) + "1",
		strings.Repeat("7^9999/", 140) + "1",
		strings.Repeat("1/7^999+", 120) + "1",
		strings.Repeat("2^", 499) + "2",
		"1/" + strings.Repeat("3", 998),
	}
	a := New()
	for _, e := range exprs {
		start := time.Now()
		_, _, _ = eval(t, a, e)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%.30q… took %v", e, d)
		}
	}
}

func FuzzEvaluate(f *testing.F) {
	for _, s := range []string{"1+2*3", "0.1+0.2", "2^-3^2", "(1/3)%", "1e-5/7", "-(2**3)", "1/0", "((", "9^9^9", "1.e+3"} {
		f.Add(s)
	}
	a := New()
	f.Fuzz(func(t *testing.T, s string) {
		r, out, err := eval(t, a, s)
		if err != nil {
			return
		}
		if r.Result == "" {
			t.Fatalf("%q: empty result", s)
		}
		if err := apps.Validate(a.Manifest().Functions[0].Result, out); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	})
}
