package postgres

import "github.com/jackc/pgx/v5"

// workAck is one activity's ack in a commit batch: the batch's are one call
// of dx_ack_work_items.
type workAck struct {
	token      string
	instance   *string // the completion's instance, nil without a completion
	completion *string
}

func queueWorkAcks(b *pgx.Batch, acks []*workAck) {
	tokens := make([]string, len(acks))
	instances := make([]*string, len(acks))
	completions := make([]*string, len(acks))
	for i, a := range acks {
		tokens[i], instances[i], completions[i] = a.token, a.instance, a.completion
	}
	b.Queue(`SELECT dx_ack_work_items($1, $2, $3)`, tokens, instances, completions)
}

func readWorkAcks(br pgx.BatchResults) error {
	_, err := br.Exec()
	return err
}
