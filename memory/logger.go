package memory

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// badgerLogger routes badger's printf-style log into slog, so that badger
// never writes to the terminal.
type badgerLogger struct{ l *slog.Logger }

var _ badger.Logger = badgerLogger{}

func loggerOrDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

func (b badgerLogger) Errorf(f string, v ...any)   { b.logf(slog.LevelError, f, v) }
func (b badgerLogger) Warningf(f string, v ...any) { b.logf(slog.LevelWarn, f, v) }
func (b badgerLogger) Infof(f string, v ...any)    { b.logf(slog.LevelInfo, f, v) }
func (b badgerLogger) Debugf(f string, v ...any)   { b.logf(slog.LevelDebug, f, v) }

func (b badgerLogger) logf(level slog.Level, f string, v []any) {
	ctx := context.Background()
	if !b.l.Enabled(ctx, level) {
		return
	}
	msg := strings.TrimSpace(fmt.Sprintf(f, v...))
	if msg == "" {
		return
	}
	b.l.Log(ctx, level, msg, "component", "badger")
}
