// Package calc is the built-in calculator app: it evaluates arithmetic
// expressions exactly, with rational numbers (math/big.Rat), so 0.1+0.2 is
// 0.3 and 1/3*3 is 1.
//
// Expressions have numbers (12, 0.5, .5, 1e-3), + - * / and ^ (a whole
// exponent, negative allowed; ** works too), unary minus, parentheses and
// a postfix % that divides by 100 (200*15% is 30). ^ binds tighter than
// unary minus and groups to the right: -2^2 is -4, 2^3^2 is 512.
//
// Results whose decimal expansion ends are given exactly; the others are
// rounded to 20 significant digits, with the exact fraction beside them.
// Expressions are limited to 1000 characters, exponents to 10000 and every
// intermediate value to about 39,000 digits, so no input can hang it.
//
// An App has no state and is safe for concurrent use.
package calc

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// sigDigits is the precision of results that do not terminate.
const sigDigits = 20

// App is the calculator app.
type App struct {
	man apps.Manifest
}

var _ apps.App = (*App)(nil)

// New returns the calculator app.
func New() *App { return &App{man: manifest()} }

// Manifest declares the app.
func (a *App) Manifest() apps.Manifest { return a.man }

type result struct {
	Expression string `json:"expression"`
	Result     string `json:"result"`
	Exact      string `json:"exact,omitempty"`
}

// Call runs one function.
func (a *App) Call(ctx context.Context, c apps.Call) (json.RawMessage, error) {
	return apps.Dispatch(ctx, a.man, map[string]apps.Handler{
		"evaluate": apps.Typed(func(_ context.Context, _ apps.Call, p struct{ Expression string }) (any, error) {
			v, err := evaluate(p.Expression)
			if err != nil {
				return nil, err
			}
			res := result{Expression: p.Expression}
			res.Result, res.Exact = format(v)
			return res, nil
		}),
	}, c)
}

// format writes v in decimal: exactly when its expansion terminates,
// else to sigDigits significant digits with the fraction as exact.
func format(v *big.Rat) (result, exact string) {
	if places, ok := decimalPlaces(v.Denom()); ok {
		if places == 0 {
			return v.Num().String(), ""
		}
		return v.FloatString(places), ""
	}
	return approximate(v), v.RatString()
}

// decimalPlaces reports whether 1/d has a finite decimal expansion, that
// is d = 2^a·5^b, and how many places it needs: max(a, b).
func decimalPlaces(d *big.Int) (int, bool) {
	r := new(big.Int).Set(d)
	twos := int(r.TrailingZeroBits())
	r.Rsh(r, uint(twos))
	fives := 0
	for _, step := range []struct {
		div *big.Int
		n   int
	}{{new(big.Int).Exp(big.NewInt(5), big.NewInt(27), nil), 27}, {big.NewInt(5), 1}} {
		q, m := new(big.Int), new(big.Int)
		for {
			q.QuoRem(r, step.div, m)
			if m.Sign() != 0 {
				break
			}
			r.Set(q)
			fives += step.n
		}
	}
	return max(twos, fives), r.Cmp(big.NewInt(1)) == 0
}

// approximate rounds v (not zero) to sigDigits significant digits, half
// away from zero, in plain notation from 1e-6 up to 1e20, else scientific.
func approximate(v *big.Rat) string {
	a := new(big.Rat).Abs(v)
	k := magnitude(a)
	digits := scaled(a, sigDigits-1-k)
	if len(digits) > sigDigits { // rounded up to the next power of ten
		k++
		digits = scaled(a, sigDigits-1-k)
	}
	var s string
	switch {
	case k >= 20 || k < -6:
		s = trimFraction(digits[:1]+"."+digits[1:]) + fmt.Sprintf("e%+d", k)
	case k >= 0:
		s = trimFraction(digits[:k+1] + "." + digits[k+1:])
	default:
		s = trimFraction("0." + strings.Repeat("0", -k-1) + digits)
	}
	if v.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// magnitude is floor(log10(a)) for a > 0.
func magnitude(a *big.Rat) int {
	k := int(float64(a.Num().BitLen()-a.Denom().BitLen()) * 0.30102999566398120)
	for a.Cmp(pow10(k)) < 0 {
		k--
	}
	for a.Cmp(pow10(k+1)) >= 0 {
		k++
	}
	return k
}

func pow10(k int) *big.Rat {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(k))), nil)
	if k >= 0 {
		return new(big.Rat).SetInt(p)
	}
	return new(big.Rat).SetFrac(big.NewInt(1), p)
}

// scaled is the decimal digits of a·10^e rounded to an integer, half up.
func scaled(a *big.Rat, e int) string {
	x := new(big.Rat).Mul(a, pow10(e))
	q, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	if m.Lsh(m, 1).Cmp(x.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.String()
}

func trimFraction(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}
