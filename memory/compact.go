package memory

import (
	"fmt"
	"time"
)

const (
	// defaultCompactTables is Options.CompactTables' default.
	defaultCompactTables = 8
	// minCompactTables is one more than badger's NumLevelZeroTables (5):
	// DB.Flatten leaves a tree that is all level 0 alone until its
	// compaction score (tables / NumLevelZeroTables) passes 1.
	minCompactTables = 6
)

// compactThreshold turns Options.CompactTables into the level-0 table
// count that triggers a compaction; 0 means never.
func compactThreshold(opt int) int {
	switch {
	case opt < 0:
		return 0
	case opt == 0:
		return defaultCompactTables
	case opt < minCompactTables:
		return minCompactTables
	}
	return opt
}

// compactIfCrowded flattens the tree when level 0 holds compactAt tables
// or more: it merges them, with the older versions of rewritten keys
// dropped, into the tree's one other level. The caller holds s.mu (for
// reading or writing) and the database is open; why this is done, and
// when it is cheap, is in the package doc.
func (s *Store) compactIfCrowded(when string) error {
	if s.ephemeral || s.compactAt == 0 {
		return nil
	}
	levels := s.db.Levels()
	if len(levels) == 0 || levels[0].NumTables < s.compactAt {
		return nil
	}
	var size int64
	for _, l := range levels {
		size += l.Size
	}
	start := time.Now()
	if err := s.db.Flatten(1); err != nil {
		return fmt.Errorf("compact %d level-0 tables: %w", levels[0].NumTables, err)
	}
	s.compactions.Add(1)
	s.log.Info("memory: compacted", "when", when, "level0_tables", levels[0].NumTables,
		"lsm_bytes", size, "took", time.Since(start))
	return nil
}
