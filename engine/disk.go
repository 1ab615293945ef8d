package engine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/bulkhead-dev/bulkhead/config"
)

// openLog opens bulkhead.log in the data directory, capped at
// limits.log_mb and rotated (three old files kept), so that nothing — an
// app spamming its stderr, say — can fill the disk through it. The file
// is the user's alone (0600).
func openLog(cfg config.Config) (io.WriteCloser, error) {
	path := filepath.Join(cfg.DataDir, "bulkhead.log")
	// Create it 0600 first: the rotating writer keeps an existing file's
	// mode.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", path, err)
	}
	f.Close()
	mb := cfg.Limits.LogMB
	if mb <= 0 {
		mb = config.DefaultLogMB
	}
	return &lumberjack.Logger{Filename: path, MaxSize: mb, MaxBackups: 3}, nil
}

// ErrDiskFull is matched by the error of a turn refused for lack of disk
// space.
var ErrDiskFull = errors.New("the disk holding bulkhead's data is nearly full")

// checkDisk refuses a turn when the data directory's disk has less than
// floorMB free: the database writes through memory maps, and running out
// of space under them would crash bulkhead instead of failing the turn.
func checkDisk(dir string, floorMB int) error {
	if floorMB <= 0 {
		return nil
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return nil // cannot tell: let the turn try
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if free < int64(floorMB)<<20 {
		return fmt.Errorf("%w: %d MB free on the disk of %s, below the floor of %d MB (limits.disk_floor_mb); free some space and retry", ErrDiskFull, free>>20, dir, floorMB)
	}
	return nil
}
