package mcp

import (
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// progressSeq numbers the progress tokens of calls.
var progressSeq atomic.Uint64

// Bounds of the progress notifications passed on from one call: a burst,
// then so many a second; the others are dropped.
const (
	progressBurst   = 5
	progressPerSec  = 10
	progressMessage = 200 // bytes of a notification's message shown
)

// progressTo is how a call's progress notifications reach report:
// rate-limited, the message cleaned and cut.
func progressTo(report func(apps.Progress), app, fn string) func(*sdk.ProgressNotificationParams) {
	var mu sync.Mutex
	tokens, last := float64(progressBurst), time.Time{}
	return func(p *sdk.ProgressNotificationParams) {
		mu.Lock()
		now := time.Now()
		if !last.IsZero() {
			tokens = min(progressBurst, tokens+now.Sub(last).Seconds()*progressPerSec)
		}
		last = now
		ok := tokens >= 1
		if ok {
			tokens--
		}
		mu.Unlock()
		if ok {
			report(apps.Progress{App: app, Function: fn, Done: p.Progress, Total: p.Total, Message: cleanLine(p.Message, progressMessage)})
		}
	}
}
