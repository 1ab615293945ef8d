package judge

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Claims. One app's free text must not change what the answer says of
// another step's value, nor of the user's own request: the synthesis
// quotes an app's text only when it states no value of a kind another
// step of the turn returned (a price, a date, a time, a duration, a
// percentage, an address, a count, a name), and says nothing of what the
// user wanted or allowed. The decision is by the value and its kind —
// "$85", "eighty-five dollars", "€85", a JSON or a table inside the text,
// a claim split over two sentences — never by how the other app's name
// is spelled; a text that names another app of the plan, however
// disguised (confusable letters, spaces, zero-width characters), is a
// claim about it too. A claim is withheld from the answer with its
// reason ("weather's text states a fare; metro_hail's fare is 30.2"); the
// results card shows every text in full beside the typed values.

// Result is one step's typed result, as the synthesis reads it.
type Result struct {
	Step, App string
	Value     json.RawMessage
}

// The kinds of value a claim can state.
const (
	kindMoney    = "money"
	kindDate     = "date"
	kindTime     = "time"
	kindDuration = "duration"
	kindPercent  = "percentage"
	kindAddress  = "address"
	kindCount    = "count"
)

// returned is a value another step returned, with its kind.
type returned struct {
	kind, field, app string
	value            string
}

// Others are what a step's free text must not speak of to be quoted in
// the answer: the other apps of the plan, the kinds of value the other
// steps returned, and their values (numbers, and closed or short texts).
type Others struct {
	apps   []string
	kinds  []returned
	values map[string]returned // canonical value -> what returned it
}

// OthersOf are the others of r among results (the plan's app steps).
func OthersOf(r Result, results []Result) Others {
	o := Others{values: map[string]returned{}}
	for _, x := range results {
		if x.Step == r.Step {
			continue
		}
		if x.App != r.App && !slices.Contains(o.apps, x.App) {
			o.apps = append(o.apps, x.App)
		}
		var v any
		if json.Unmarshal(x.Value, &v) != nil {
			continue
		}
		WalkLeaves(v, "", func(path, _ string, leaf any) {
			field := fieldName(path)
			ret := returned{kind: kindOf(field, leaf), field: field, app: x.App}
			switch t := leaf.(type) {
			case float64:
				ret.value = CanonNumber(t)
			case string:
				ret.value = NormValue(t)
			default:
				return
			}
			if ret.kind != "" {
				o.kinds = append(o.kinds, ret)
			}
			if n := ret.value; len(n) >= 1 && len(n) <= 40 && (ret.kind != "" || len(n) >= 3) {
				o.values[n] = ret
			}
		})
	}
	return o
}

// About says what of o the text claims — "states a fare; metro_hail's
// fare is 30.2", "names metro_hail", "speaks of your request" — or ""
// when it claims nothing of it.
func (o Others) About(text string) string {
	stated := statedKinds(text)
	for _, r := range o.kinds {
		if slices.Contains(stated, r.kind) {
			return fmt.Sprintf("states %s; %s's %s is %s", article(kindWords(r)), r.app, humanField(r.field), clip(r.value, 40))
		}
	}
	folded := fold(text)
	for _, a := range o.apps {
		if namesApp(folded, a) {
			return "names " + a
		}
	}
	if w := userClaim(text); w != "" {
		return w
	}
	for _, num := range TokenNumbers(text) {
		if r, ok := o.values[num]; ok {
			return fmt.Sprintf("states %s's %s (%s)", r.app, humanField(r.field), num)
		}
	}
	n := NormSpace(text)
	vals := make([]string, 0, len(o.values))
	for v := range o.values {
		vals = append(vals, v)
	}
	sort.Strings(vals)
	for _, v := range vals {
		if _, err := strconv.ParseFloat(v, 64); err != nil && len(v) >= 3 && ContainsValue(n, v) {
			r := o.values[v]
			return fmt.Sprintf("states %s's %s (%s)", r.app, humanField(r.field), clip(v, 40))
		}
	}
	return ""
}

// fieldName is the last property name of a leaf's path: "fare_usd" of
// "rides[0].fare_usd".
func fieldName(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		path = path[i+1:]
	}
	if i := strings.IndexByte(path, '['); i >= 0 {
		path = path[:i]
	}
	return strings.ToLower(path)
}

var (
	moneyFields    = []string{"fare", "price", "cost", "amount", "total", "fee", "usd", "eur", "gbp", "balance", "charge", "salary", "budget", "tip", "rate", "subtotal", "tax", "paid", "due", "owed", "refund"}
	durationFields = []string{"eta", "minutes", "mins", "hours", "duration", "wait", "seconds", "days", "delay", "time_min"}
	percentFields  = []string{"percent", "pct", "probability", "chance", "ratio", "share"}
	countFields    = []string{"count", "number", "quantity", "qty", "seats", "items", "stock", "available", "left"}
	dateFields     = []string{"date", "day", "when", "deadline", "departure", "arrival", "birthday"}
	addressFields  = []string{"address", "email", "to", "from", "url", "location", "street", "city", "place", "destination", "origin"}
)

// fieldHas reports whether a field's name holds one of words as a word
// of its own ("fare_usd" holds "fare" and "usd").
func fieldHas(field string, words []string) bool {
	for _, w := range strings.FieldsFunc(field, func(r rune) bool { return r == '_' || r == '-' || r == ' ' }) {
		if slices.Contains(words, w) {
			return true
		}
	}
	return false
}

// kindOf is the kind of value a step returned in field: by its name and
// its value's shape ("" for a plain number or text).
func kindOf(field string, leaf any) string {
	switch t := leaf.(type) {
	case float64:
		switch {
		case fieldHas(field, moneyFields):
			return kindMoney
		case fieldHas(field, durationFields):
			return kindDuration
		case fieldHas(field, percentFields):
			return kindPercent
		case fieldHas(field, countFields):
			return kindCount
		}
	case string:
		if k := statedKinds(t); len(k) == 1 && strings.TrimSpace(t) != "" && len(t) <= 40 {
			return k[0]
		}
		switch {
		case reISODate().MatchString(t) || fieldHas(field, dateFields) && len(t) <= 40:
			return kindDate
		case fieldHas(field, addressFields) && len(t) <= 80:
			return kindAddress
		}
	}
	return ""
}

var (
	reISODate   = lazyRegexp(`^\d{4}-\d{2}-\d{2}`)
	reMoneyWord = lazyRegexp(`(?i)\b(?:fares?|prices?|priced|costs?|charges?|fees?|tolls?|tariffs?|rates?|dollars?|euros?|pounds?|bucks|pay|paid)\b`)
	numberWords = `(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|a|an|a couple of|a few|several|half)(?:[\s-]+(?:and[\s-]+)?(?:one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand))*`
	num         = `(?:\d[\d,.]*|` + numberWords + `)`
	kindRes     = map[string]*regexp.Regexp{
		kindMoney:    regexp.MustCompile(`(?i)(?:[$€£¥₹₩₽]\s?\d|\b(?:usd|eur|gbp|chf|jpy|cad|aud)\s?\d|\b` + num + `\s?(?:dollars?|bucks|usd|euros?|eur|pounds?|gbp|quid|cents?|yen|francs?|rupees?|pesos?)\b|\b(?:fares?|prices?|costs?|charges?|fees?|totals?|amount|tolls?)\b[\W_]{0,8}\d|\d[\d.,]*[\W_]{0,8}(?:fare|price|cost|charge|fee)\b)`),
		kindPercent:  regexp.MustCompile(`(?i)(?:\d[\d.,]*\s?%|\b` + num + `\s?(?:percent|per cent|pct)\b)`),
		kindDuration: regexp.MustCompile(`(?i)\b` + num + `\s?(?:minutes?|mins?|hours?|hrs?|seconds?|secs?|days?|weeks?)\b`),
		kindTime:     regexp.MustCompile(`(?i)(?:\b\d{1,2}:\d{2}\b|\b\d{1,2}\s?(?:am|pm|a\.m\.|p\.m\.)(?:\W|$)|\b(?:noon|midnight)\b)`),
		kindDate:     regexp.MustCompile(`(?i)(?:\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|\b(?:today|tomorrow|tonight|yesterday)\b|\b(?:next|this|on|last)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|month|weekend)\b)`),
		kindAddress:  regexp.MustCompile(`(?i)(?:[\p{L}\p{N}._%+\-]+@[\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)+|\b[a-z][a-z0-9+.\-]*://\S+|\b\d+\s+[A-Z][a-z]+\s+(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln)\b)`),
	}
)

// statedKinds lists the kinds of value a text states.
func statedKinds(text string) []string {
	t := fold(text)
	var out []string
	for _, k := range []string{kindMoney, kindPercent, kindDuration, kindTime, kindDate, kindAddress} {
		if kindRes[k].MatchString(t) {
			out = append(out, k)
		}
	}
	// A word of money and a number anywhere: a table, a claim over two
	// sentences ("the new fare… It is 85").
	if !slices.Contains(out, kindMoney) && reMoneyWord().MatchString(t) && len(TokenNumbers(t)) > 0 {
		out = append(out, kindMoney)
	}
	return out
}

// userClaim says what a text claims of the user's request, approvals or
// bulkhead's state ("" when nothing): an app reports what it did and
// found, never what the user wanted or allowed.
func userClaim(text string) string {
	t := " " + strings.ToLower(NormSpace(fold(text))) + " "
	for _, p := range userClaims {
		if p.MatchString(t) {
			return "speaks of your request or what you allowed"
		}
	}
	return ""
}

var userClaims = []*regexp.Regexp{
	regexp.MustCompile(`\b(?:as|like|what) (?:you|the user)(?: have| had)? (?:asked|requested|wanted|instructed|said|told|ordered|specified|approved|allowed|agreed|confirmed|authori[sz]ed|permitted)`),
	regexp.MustCompile(`\b(?:you|the user)(?: have| had| already| previously| also| just)* (?:approved|allowed|authori[sz]ed|permitted|consented|agreed|confirmed|granted|asked|requested|instructed|wanted|want me|wants me|wants you|said|told me|chose|picked|prefer|preferred)\b`),
	regexp.MustCompile(`\b(?:per|following|according to) (?:your|the user's) (?:request|instructions?|wishes|approval|permission|orders?)\b`),
	regexp.MustCompile(`\b(?:with|given|under) your (?:permission|approval|consent|authori[sz]ation)\b`),
	regexp.MustCompile(`\bbulkhead (?:has|is|was|already|allowed|approved|granted|trusts|says)\b`),
	regexp.MustCompile(`\b(?:the hub|the assistant|the system) (?:has|already|allowed|approved|granted|asked|wants)\b`),
	regexp.MustCompile(`\b(?:permission|approval|access) (?:was|is|has been) (?:already )?(?:granted|given|approved)\b`),
}

// fold is text as a claim is read: compatibility forms and confusable
// letters to their Latin look-alikes, marks and format characters (a
// zero-width space) dropped.
func fold(text string) string {
	t := norm.NFKD.String(text)
	var b strings.Builder
	for _, r := range t {
		switch {
		case unicode.Is(unicode.Mn, r), unicode.Is(unicode.Cf, r):
			continue
		}
		if l, ok := confusables[r]; ok {
			r = l
		}
		b.WriteRune(r)
	}
	return b.String()
}

// confusables are letters of other scripts that read as Latin ones.
var confusables = map[rune]rune{
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's', 'һ': 'h', 'ԁ': 'd', 'ɡ': 'g', 'ո': 'n', 'ս': 'u', 'м': 'm', 'т': 't', 'к': 'k', 'н': 'h', 'в': 'b',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T', 'Х': 'X', 'У': 'Y', 'І': 'I', 'Ј': 'J', 'Ѕ': 'S',
	'α': 'a', 'ο': 'o', 'ρ': 'p', 'ν': 'v', 'ι': 'i', 'κ': 'k', 'τ': 't', 'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Χ': 'X', 'Υ': 'Y', 'Ζ': 'Z',
	'ı': 'i', 'ℓ': 'l', '０': '0', '１': '1',
}

// namesApp reports whether a folded text names app, in any of its
// spellings: metro_hail as "metro_hail", "Metro Hail", "metro-hail",
// "MetroHail", "M e t r o H a i l" — its letters in order, with at most
// a few separators between them, standing as a word of their own.
func namesApp(text, app string) bool {
	var letters []string
	for _, r := range strings.ToLower(app) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			letters = append(letters, regexp.QuoteMeta(string(r)))
		}
	}
	if len(letters) == 0 {
		return false
	}
	re, err := regexp.Compile(`(?i)(?:^|[^\p{L}\p{N}])` + strings.Join(letters, `[^\p{L}\p{N}]{0,3}`) + `(?:$|[^\p{L}\p{N}])`)
	return err == nil && re.MatchString(text)
}

// kindWords names what a returned value is, for a reason: its field's
// words ("fare"), else its kind ("price").
func kindWords(r returned) string {
	if h := humanField(r.field); h != "" && h != "value" {
		return h
	}
	return r.kind
}

// humanField is a field's name as words: "fare_usd" is "fare".
func humanField(field string) string {
	var words []string
	for _, w := range strings.FieldsFunc(field, func(r rune) bool { return r == '_' || r == '-' }) {
		switch w {
		case "usd", "eur", "gbp", "min", "mins", "minutes", "pct", "percent", "c", "f", "km", "mi":
			continue
		}
		words = append(words, w)
	}
	if len(words) == 0 {
		return "value"
	}
	return strings.Join(words, " ")
}

// article puts "a" or "an" before a noun.
func article(noun string) string {
	if noun == "" {
		return noun
	}
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}
