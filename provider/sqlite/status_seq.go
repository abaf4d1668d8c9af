package sqlite

import (
	"context"
	"fmt"
)

// statusSeq hands out one write transaction's status sequence numbers
// (instances.status_seq, which orders status changes for Watch). The
// counter row is read once, when the transaction first needs a number, and
// written back once, before it commits: every turn of a batch bumping the
// row cost two statements of its own, a fifth of a timer firing's time in
// the writer. The write lock makes the numbers of one transaction larger
// than any committed before it. A request rolled back to its savepoint
// leaves a gap, which Watch does not mind: it reads changes above a number.
type statusSeq struct {
	loaded     bool
	last, read int64
}

// next returns the transaction's next status sequence number.
func (s *statusSeq) next(ctx context.Context, tx *txn) (int64, error) {
	if !s.loaded {
		var err error
		if s.read, err = queries.StatusSeqRead(ctx, tx); err != nil {
			return 0, fmt.Errorf("read status sequence: %w", err)
		}
		s.last, s.loaded = s.read, true
	}
	s.last++
	return s.last, nil
}

// store writes the last number handed out back to the counter row.
func (s *statusSeq) store(ctx context.Context, tx *txn) error {
	if !s.loaded || s.last == s.read {
		return nil
	}
	if err := queries.StatusSeqStore(ctx, tx, s.last); err != nil {
		return fmt.Errorf("store status sequence: %w", err)
	}
	return nil
}
