package judge

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr on first use, so that a process that never
// needs it (bulkhead version, doctor) does not pay for it at start.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
