package postgres

import (
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// turnAck is one orchestration turn's ack in a commit batch. The batch's
// acks go to dx_ack_orchestration_items in one call (see functions.sql).
type turnAck struct {
	token    string
	enc      encode.Ack
	lease    []int // positions in enc.WorkerItems to insert leased to the caller
	leaseFor time.Duration
	// incarnation is the instance's when this ack creates it (see histcache).
	incarnation int64
	res         ackResult // set when the batch's results are read
}

// ackResult is what the ack function reports for one ack: for the
// notifications sent after commit, and the worker items it inserted leased
// (in the order of lease; a nil token for an item the turn also cancelled).
type ackResult struct {
	instance                           string
	statusChanged, orchestratorPending bool
	leaseTokens                        []*string
	leaseStates                        []*string
	// change is the status change the ack made, for watchers (with
	// statusChanged; its instance alone when the row did not say).
	change announcedChange
}

// ackBatchArgs are the ack function's parallel arrays for acks: one entry
// per ack, and the events and items of all of them tagged with their ack's
// ordinal (1-based).
type ackBatchArgs struct {
	tokens, outputs, names, versions, parents []string
	statuses, customValues                    []*string
	executions, leaseMs, incarnations         []int64
	customSet                                 []bool

	eventAcks             []int32
	eventIDs              []int64
	eventKinds, eventData []string

	workerAcks                         []int32
	workerLeases                       []*int32
	workerInstances, workerData        []string
	workerExecutions, workerActivities []int64
	workerTags, workerSessions         []*string

	orchAcks                          []int32
	orchInstances, orchData           []string
	orchVisible                       []int64
	orchStartNames, orchStartVersions []*string

	cancelInstances                    []string
	cancelExecutions, cancelActivities []int64

	timerAcks                 []int32
	timerExecutions, timerIDs []int64

	valueReplace []bool
	valueAcks    []int32
	valueKeys    []string
	valueData    []*string
}

func newAckBatchArgs(acks []*turnAck) *ackBatchArgs {
	a := &ackBatchArgs{}
	for k, ack := range acks {
		a.add(int32(k+1), ack)
	}
	return a
}

func (a *ackBatchArgs) add(ord int32, ack *turnAck) {
	enc := ack.enc
	a.tokens = append(a.tokens, ack.token)
	a.executions = append(a.executions, enc.ExecutionID)
	var status *string
	if enc.Meta.Status != "" {
		s := string(enc.Meta.Status)
		status = &s
	}
	a.statuses = append(a.statuses, status)
	a.outputs = append(a.outputs, enc.Meta.Output)
	a.names = append(a.names, enc.Meta.OrchestrationName)
	a.versions = append(a.versions, enc.Meta.OrchestrationVersion)
	a.parents = append(a.parents, enc.Meta.ParentInstance)
	var custom *string
	if cs := enc.CustomStatus; cs != nil && !cs.Clear {
		v := cs.Value
		custom = &v
	}
	a.customSet = append(a.customSet, enc.CustomStatus != nil)
	a.customValues = append(a.customValues, custom)
	a.leaseMs = append(a.leaseMs, ack.leaseFor.Milliseconds())
	a.incarnations = append(a.incarnations, ack.incarnation)
	for _, e := range enc.Events {
		a.eventAcks = append(a.eventAcks, ord)
		a.eventIDs, a.eventKinds, a.eventData = append(a.eventIDs, e.ID), append(a.eventKinds, string(e.Kind)), append(a.eventData, e.Data)
	}
	a.addWorkerItems(ord, ack)
	for _, o := range enc.OrchItems {
		a.orchAcks = append(a.orchAcks, ord)
		a.orchInstances, a.orchData = append(a.orchInstances, o.Item.Instance), append(a.orchData, o.Data)
		a.orchVisible = append(a.orchVisible, timerDue(o.Item))
		name, version := startColumns(o.Item)
		a.orchStartNames, a.orchStartVersions = append(a.orchStartNames, name), append(a.orchStartVersions, version)
	}
	for _, c := range enc.Cancelled {
		a.cancelInstances = append(a.cancelInstances, c.Instance)
		a.cancelExecutions = append(a.cancelExecutions, c.ExecutionID)
		a.cancelActivities = append(a.cancelActivities, c.ActivityID)
	}
	for _, t := range enc.CancelledTimers {
		a.timerAcks = append(a.timerAcks, ord)
		a.timerExecutions, a.timerIDs = append(a.timerExecutions, t.ExecutionID), append(a.timerIDs, t.TimerID)
	}
	a.addValues(ord, enc.Values)
}

// addValues adds an ack's values update: a key with its value, or with
// NULL to clear it.
func (a *ackBatchArgs) addValues(ord int32, u *provider.ValuesUpdate) {
	a.valueReplace = append(a.valueReplace, u != nil && u.Replace)
	if u == nil {
		return
	}
	for k, v := range u.Set {
		a.valueAcks, a.valueKeys, a.valueData = append(a.valueAcks, ord), append(a.valueKeys, k), append(a.valueData, &v)
	}
	for _, k := range u.Clear {
		a.valueAcks, a.valueKeys, a.valueData = append(a.valueAcks, ord), append(a.valueKeys, k), append(a.valueData, nil)
	}
}

// addWorkerItems adds ack's worker items, each with its place in the ack's
// lease list (1-based) when it is to be leased.
func (a *ackBatchArgs) addWorkerItems(ord int32, ack *turnAck) {
	place := make([]int32, len(ack.enc.WorkerItems)) // 0: not leased
	for k, i := range ack.lease {
		place[i] = int32(k + 1)
	}
	for i, w := range ack.enc.WorkerItems {
		var lease *int32
		if place[i] > 0 {
			lease = &place[i]
		}
		a.workerAcks = append(a.workerAcks, ord)
		a.workerLeases = append(a.workerLeases, lease)
		a.workerInstances = append(a.workerInstances, w.Item.Instance)
		a.workerExecutions = append(a.workerExecutions, w.Item.ExecutionID)
		a.workerActivities = append(a.workerActivities, w.Item.ID)
		a.workerData = append(a.workerData, w.Data)
		a.workerTags = append(a.workerTags, nonEmpty(w.Item.Tag))
		a.workerSessions = append(a.workerSessions, nonEmpty(w.Item.Session))
	}
}

// named is the function's arguments by parameter name.
func (a *ackBatchArgs) named() []namedArg {
	return []namedArg{
		{"p_tokens", a.tokens}, {"p_executions", a.executions}, {"p_statuses", a.statuses},
		{"p_outputs", a.outputs}, {"p_names", a.names}, {"p_versions", a.versions}, {"p_parents", a.parents},
		{"p_custom_set", a.customSet}, {"p_custom_values", a.customValues}, {"p_lease_ms", a.leaseMs},
		{"p_incarnations", a.incarnations},
		{"p_event_acks", nonNil(a.eventAcks)}, {"p_event_ids", nonNil(a.eventIDs)},
		{"p_event_kinds", nonNil(a.eventKinds)}, {"p_event_data", nonNil(a.eventData)},
		{"p_worker_acks", nonNil(a.workerAcks)}, {"p_worker_instances", nonNil(a.workerInstances)},
		{"p_worker_executions", nonNil(a.workerExecutions)}, {"p_worker_activities", nonNil(a.workerActivities)},
		{"p_worker_data", nonNil(a.workerData)}, {"p_worker_leases", nonNil(a.workerLeases)},
		{"p_worker_tags", nonNil(a.workerTags)}, {"p_worker_sessions", nonNil(a.workerSessions)},
		{"p_orch_acks", nonNil(a.orchAcks)}, {"p_orch_instances", nonNil(a.orchInstances)},
		{"p_orch_data", nonNil(a.orchData)}, {"p_orch_visible_ms", nonNil(a.orchVisible)},
		{"p_orch_start_names", nonNil(a.orchStartNames)}, {"p_orch_start_versions", nonNil(a.orchStartVersions)},
		{"p_cancel_instances", nonNil(a.cancelInstances)}, {"p_cancel_executions", nonNil(a.cancelExecutions)},
		{"p_cancel_activities", nonNil(a.cancelActivities)},
		{"p_timer_acks", nonNil(a.timerAcks)}, {"p_timer_executions", nonNil(a.timerExecutions)},
		{"p_timer_ids", nonNil(a.timerIDs)},
		{"p_value_replace", a.valueReplace}, {"p_value_acks", nonNil(a.valueAcks)},
		{"p_value_keys", nonNil(a.valueKeys)}, {"p_value_data", nonNil(a.valueData)},
	}
}

// startColumns are orchestrator_queue.start_name and start_version for a
// message: a start's orchestration and requested version, NULL for others.
func startColumns(w provider.WorkItem) (name, version *string) {
	if w.Kind != provider.WorkStartOrchestration {
		return nil, nil
	}
	return &w.Name, &w.Version
}

// queueAcks queues one call acking all of acks.
func queueAcks(b *pgx.Batch, acks []*turnAck) {
	b.Queue(ackItemsQuery(), values(newAckBatchArgs(acks).named())...)
}

// ackItemsQuery is the ack function's call: its argument names never change.
var ackItemsQuery = sync.OnceValue(func() string {
	return namedCall("dx_ack_orchestration_items", (&ackBatchArgs{}).named())
})

// ackedRow is a row of dx_ack_orchestration_items, read by column name:
// one per ack, in the call's order (Ack, from 1).
type ackedRow struct {
	Ack                 int32     `db:"ack"`
	InstanceID          string    `db:"instance_id"`
	StatusChanged       bool      `db:"status_changed"`
	OrchestratorPending bool      `db:"orchestrator_pending"`
	LeaseTokens         []*string `db:"lease_tokens"`
	LeaseStates         []*string `db:"lease_states"`
	// The status change, as Watch reports it; NULL when none.
	ExecutionID         *int64  `db:"execution_id"`
	Status              *string `db:"status"`
	CustomStatusVersion *int64  `db:"custom_status_version"`
	StatusSeq           *int64  `db:"status_seq"`
	StatusXid           *int64  `db:"status_xid"`
}

func (r ackedRow) result() ackResult {
	res := ackResult{instance: r.InstanceID, statusChanged: r.StatusChanged, orchestratorPending: r.OrchestratorPending,
		leaseTokens: r.LeaseTokens, leaseStates: r.LeaseStates}
	res.change.Instance = r.InstanceID
	if r.StatusChanged && r.StatusSeq != nil && r.ExecutionID != nil && r.Status != nil && r.CustomStatusVersion != nil && r.StatusXid != nil {
		res.change = announcedChange{Instance: r.InstanceID, ExecutionID: *r.ExecutionID, Status: *r.Status,
			CustomStatusVersion: *r.CustomStatusVersion, Seq: *r.StatusSeq, Xid: *r.StatusXid}
	}
	return res
}

// readAcks reads the call's rows, one per ack, into each ack's result.
func readAcks(br pgx.BatchResults, acks []*turnAck) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		r, err := pgx.RowToStructByName[ackedRow](rows)
		if err != nil {
			return fmt.Errorf("read ack result: %w", err)
		}
		ord, res := r.Ack, r.result()
		if ord < 1 || int(ord) > len(acks) {
			return fmt.Errorf("read ack result: ack %d of %d", ord, len(acks))
		}
		acks[ord-1].res = res
		seen++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if seen != len(acks) {
		return fmt.Errorf("read ack results: %d rows for %d acks", seen, len(acks))
	}
	return nil
}

// timerDue is when a timer message becomes visible (Unix ms); 0 means at once.
func timerDue(item provider.WorkItem) int64 {
	if item.Kind == provider.WorkTimerFired {
		return item.FireAt
	}
	return 0
}
