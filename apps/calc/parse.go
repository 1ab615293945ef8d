package calc

import (
	"fmt"
	"math/big"
	"strings"
	"unicode"
)

// Limits that keep every evaluation small and quick.
const (
	maxLen      = 1000    // characters in an expression
	maxExponent = 10000   // absolute value of a power's or a literal's exponent
	maxBits     = 1 << 17 // bits of numerator and denominator of any value (~39,000 digits)
)

// posError is an error at a 1-based character position.
type posError struct {
	pos int
	msg string
}

func (e *posError) Error() string { return fmt.Sprintf("%s at position %d", e.msg, e.pos) }

// parser evaluates as it parses, by recursive descent:
//
//	expr    = term { ("+" | "-") term }
//	term    = unary { ("*" | "/") unary }
//	unary   = ("-" | "+") unary | power
//	power   = postfix [ ("^" | "**") unary ]    right-associative
//	postfix = primary { "%" }
//	primary = number | "(" expr ")"
//
// so -2^2 is -4, 2^3^2 is 512 and 2^-1 is 0.5.
type parser struct {
	src []rune
	pos int // index into src
}

func evaluate(s string) (*big.Rat, error) {
	p := &parser{src: []rune(s)}
	if len(p.src) > maxLen {
		return nil, fmt.Errorf("the expression is longer than %d characters", maxLen)
	}
	p.space()
	if p.pos == len(p.src) {
		return nil, fmt.Errorf("the expression is empty")
	}
	v, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.src) {
		return nil, p.unexpected()
	}
	return v, nil
}

func (p *parser) space() {
	for p.pos < len(p.src) && unicode.IsSpace(p.src[p.pos]) {
		p.pos++
	}
}

// peek returns the operator at the current position, normalised, and its
// length in characters; "" at the end.
func (p *parser) peek() (string, int) {
	if p.pos >= len(p.src) {
		return "", 0
	}
	switch c := p.src[p.pos]; c {
	case '*':
		if p.pos+1 < len(p.src) && p.src[p.pos+1] == '*' {
			return "^", 2
		}
		return "*", 1
	case '×', '·':
		return "*", 1
	case '÷':
		return "/", 1
	case '−', '–':
		return "-", 1
	default:
		return string(c), 1
	}
}

func (p *parser) unexpected() error {
	if p.pos >= len(p.src) {
		return &posError{len(p.src) + 1, "unexpected end of the expression"}
	}
	return &posError{p.pos + 1, fmt.Sprintf("unexpected %q", p.src[p.pos])}
}

func (p *parser) expr() (*big.Rat, error) {
	v, err := p.term()
	for err == nil {
		op, n := p.peek()
		if op != "+" && op != "-" {
			break
		}
		at := p.pos
		p.pos += n
		p.space()
		var w *big.Rat
		if w, err = p.term(); err != nil {
			break
		}
		if op == "+" {
			v.Add(v, w)
		} else {
			v.Sub(v, w)
		}
		err = fit(v, at)
	}
	return v, err
}

func (p *parser) term() (*big.Rat, error) {
	v, err := p.unary()
	for err == nil {
		op, n := p.peek()
		if op != "*" && op != "/" {
			break
		}
		at := p.pos
		p.pos += n
		p.space()
		var w *big.Rat
		if w, err = p.unary(); err != nil {
			break
		}
		if op == "*" {
			v.Mul(v, w)
		} else {
			if w.Sign() == 0 {
				return nil, &posError{at + 1, "division by zero"}
			}
			v.Quo(v, w)
		}
		err = fit(v, at)
	}
	return v, err
}

func (p *parser) unary() (*big.Rat, error) {
	switch op, n := p.peek(); op {
	case "-", "+":
		p.pos += n
		p.space()
		v, err := p.unary()
		if err == nil && op == "-" {
			v.Neg(v)
		}
		return v, err
	}
	return p.power()
}

func (p *parser) power() (*big.Rat, error) {
	base, err := p.postfix()
	if err != nil {
		return nil, err
	}
	op, n := p.peek()
	if op != "^" {
		return base, nil
	}
	at := p.pos
	p.pos += n
	p.space()
	exp, err := p.unary()
	if err != nil {
		return nil, err
	}
	return pow(base, exp, at)
}

func (p *parser) postfix() (*big.Rat, error) {
	v, err := p.primary()
	for err == nil {
		if op, _ := p.peek(); op != "%" {
			break
		}
		p.pos++
		p.space()
		v.Quo(v, big.NewRat(100, 1))
	}
	return v, err
}

func (p *parser) primary() (*big.Rat, error) {
	op, _ := p.peek()
	if op == "(" {
		open := p.pos
		p.pos++
		p.space()
		v, err := p.expr()
		if err != nil {
			return nil, err
		}
		if op, _ := p.peek(); op != ")" {
			if p.pos < len(p.src) {
				return nil, p.unexpected()
			}
			return nil, &posError{open + 1, "missing ')' for the '('"}
		}
		p.pos++
		p.space()
		return v, nil
	}
	return p.number()
}

// number reads digits [ "." digits ] [ ("e" | "E") [sign] digits ].
func (p *parser) number() (*big.Rat, error) {
	start := p.pos
	digits := func() string {
		i := p.pos
		for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
		}
		return string(p.src[i:p.pos])
	}
	whole := digits()
	frac := ""
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		frac = digits()
	}
	if whole == "" && frac == "" {
		p.pos = start
		if p.pos >= len(p.src) {
			return nil, &posError{len(p.src) + 1, "expected a number, found the end of the expression"}
		}
		return nil, &posError{start + 1, fmt.Sprintf("expected a number, found %q", p.src[start])}
	}
	exp := 0
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		sign := 1
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			if p.src[p.pos] == '-' {
				sign = -1
			}
			p.pos++
		}
		ed := digits()
		if ed == "" {
			return nil, &posError{p.pos + 1, "expected the digits of an exponent"}
		}
		e := strings.TrimLeft(ed, "0")
		if len(e) > 5 {
			return nil, &posError{start + 1, fmt.Sprintf("the exponent of this number is larger than %d", maxExponent)}
		}
		for _, c := range e {
			exp = exp*10 + int(c-'0')
		}
		if exp > maxExponent {
			return nil, &posError{start + 1, fmt.Sprintf("the exponent of this number is larger than %d", maxExponent)}
		}
		exp *= sign
	}
	num, _ := new(big.Int).SetString(whole+frac+"0", 10) // the "0" makes "" valid; divided out below
	exp -= len(frac) + 1
	v := new(big.Rat).SetInt(num)
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil)
	if exp >= 0 {
		v.Mul(v, new(big.Rat).SetInt(scale))
	} else {
		v.Quo(v, new(big.Rat).SetInt(scale))
	}
	p.space()
	return v, fit(v, start)
}

// pow raises base to a whole exponent of at most maxExponent.
func pow(base, exp *big.Rat, at int) (*big.Rat, error) {
	if !exp.IsInt() {
		return nil, &posError{at + 1, "the exponent must be a whole number"}
	}
	if exp.Num().CmpAbs(big.NewInt(maxExponent)) > 0 {
		return nil, &posError{at + 1, fmt.Sprintf("the exponent is larger than %d", maxExponent)}
	}
	n := exp.Num().Int64()
	if base.Sign() == 0 && n < 0 {
		return nil, &posError{at + 1, "division by zero (0 to a negative power)"}
	}
	// The least number of bits the power can have; fit checks the rest.
	least := int64(max(base.Num().BitLen()-1, 0)+max(base.Denom().BitLen()-1, 0)) * abs64(n)
	if least > maxBits {
		return nil, &posError{at + 1, "the result is too large"}
	}
	e := big.NewInt(abs64(n))
	num := new(big.Int).Exp(base.Num(), e, nil)
	den := new(big.Int).Exp(base.Denom(), e, nil)
	if n < 0 {
		num, den = den, num
	}
	v := new(big.Rat).SetFrac(num, den)
	return v, fit(v, at)
}

// fit fails when v has grown past maxBits.
func fit(v *big.Rat, at int) error {
	if v.Num().BitLen()+v.Denom().BitLen() > maxBits {
		return &posError{at + 1, "the result is too large"}
	}
	return nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
