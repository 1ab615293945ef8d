package hub

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Clock is where the person asking is in time: the zone their client
// runs in (an IANA name, "" where the system does not say) and its
// offset from UTC when they asked. A turn reads its request's relative
// dates ("tomorrow") in that zone — the person's day, not the serving
// process's, which another session may have started in another zone.
type Clock struct {
	Zone   string `json:"zone,omitempty"`
	Offset int    `json:"offset"` // seconds east of UTC
	Set    bool   `json:"set,omitempty"`
}

// LocalClock is the calling process's clock: $TZ, else where
// /etc/localtime leads, and the offset now.
func LocalClock() Clock {
	_, off := time.Now().Zone()
	c := Clock{Offset: off, Set: true}
	if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" {
		if _, err := time.LoadLocation(tz); err == nil {
			c.Zone = tz
			return c
		}
	}
	if l, err := filepath.EvalSymlinks("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(l, "zoneinfo/"); ok {
			if _, err := time.LoadLocation(name); err == nil {
				c.Zone = name
			}
		}
	}
	return c
}

// Location is the clock's zone: by name where it loads, else a fixed
// zone of its offset.
func (c Clock) Location() *time.Location {
	if c.Zone != "" {
		if l, err := time.LoadLocation(c.Zone); err == nil {
			return l
		}
	}
	return time.FixedZone("UTC"+offsetWords(c.Offset), c.Offset)
}

func offsetWords(s int) string {
	sign := "+"
	if s < 0 {
		sign, s = "-", -s
	}
	return sign + time.Duration(time.Duration(s)*time.Second).String()
}

type clockKey struct{}

// WithClock marks ctx as a request from a person on clock c (the
// serving process does it with the clock each client sends).
func WithClock(ctx context.Context, c Clock) context.Context {
	if !c.Set {
		return ctx
	}
	return context.WithValue(ctx, clockKey{}, c)
}

// clockOf is the clock ctx carries, if any.
func clockOf(ctx context.Context) (Clock, bool) {
	c, ok := ctx.Value(clockKey{}).(Clock)
	return c, ok
}

// nowIn is the operator's clock in the zone of the person whose request
// ctx carries (the operator's own zone where it carries none).
func (o *Operator) nowIn(ctx context.Context) time.Time {
	now := o.now()
	if c, ok := clockOf(ctx); ok {
		return now.In(c.Location())
	}
	return now
}
