package postgres

import "github.com/jackc/pgx/v5"

// workAck is one activity's ack in a commit batch: the batch's are one call
// of dx_ack_work_items.
type workAck struct {
	token      string
	instance   *string // the completion's instance, nil without a completion
	completion *string
	// quiet, when set, asks whether the completion's instance still is as
	// the caller judged it (dx_quiet_checks); its answer goes in ok.
	quiet *quietCheck
}

// quietCheck is what a quiet ack must find unchanged: the instance's
// incarnation, execution and last event.
type quietCheck struct {
	incarnation, execution, lastEvent int64
	ok                                bool
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

// queueQuietChecks queues the checks of the batch's quiet acks; false when
// it has none.
func queueQuietChecks(b *pgx.Batch, acks []*workAck) bool {
	var instances []string
	var incarnations, executions, lastEvents []int64
	for _, a := range acks {
		if q := a.quiet; q != nil {
			instances = append(instances, *a.instance)
			incarnations = append(incarnations, q.incarnation)
			executions = append(executions, q.execution)
			lastEvents = append(lastEvents, q.lastEvent)
		}
	}
	if len(instances) == 0 {
		return false
	}
	b.Queue(`SELECT dx_quiet_checks($1, $2, $3, $4)`, instances, incarnations, executions, lastEvents)
	return true
}

func readQuietChecks(br pgx.BatchResults, acks []*workAck) error {
	var ok []bool
	if err := br.QueryRow().Scan(&ok); err != nil {
		return err
	}
	k := 0
	for _, a := range acks {
		if a.quiet != nil {
			a.quiet.ok = k < len(ok) && ok[k]
			k++
		}
	}
	return nil
}
