package inspect

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// Timer purposes, as TimerPurpose names them.
const (
	PurposeTimer          = "timer"
	PurposeRetryBackoff   = "retry backoff"
	PurposeAttemptTimeout = "attempt timeout"
)

// TimerPurpose labels a TimerCreated event: the code's own timer, a retry's
// backoff or an attempt's timeout (the runtime records which in Reason).
func TimerPurpose(created provider.Event) string {
	switch {
	case strings.HasPrefix(created.Reason, runtime.TimerRetryBackoff):
		return PurposeRetryBackoff
	case strings.HasPrefix(created.Reason, runtime.TimerAttemptTimeout):
		return PurposeAttemptTimeout
	}
	return PurposeTimer
}

// ShownStatus is an instance's status as people read it: Stalled for a
// running instance whose last turn failed and is being retried.
func ShownStatus(i provider.InstanceInfo) string {
	if i.Status == provider.StatusRunning && i.LastError != nil {
		return string(provider.StatusStalled)
	}
	return string(i.Status)
}

// Age is d rounded to its largest unit: 45s, 12m, 5h, 3d.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(0, int(d.Seconds())))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// ShortDuration prints d to the millisecond: 0s, 850ms, 1.25s, 2m3s.
func ShortDuration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// IsCompletion reports whether k answers a decision made earlier.
func IsCompletion(k provider.EventKind) bool {
	switch k {
	case provider.EventActivityCompleted, provider.EventActivityFailed, provider.EventTimerFired,
		provider.EventSubOrchestrationCompleted, provider.EventSubOrchestrationFailed:
		return true
	}
	return false
}

// Detail is the one payload that says most about an event, cut to limit
// runes (0: whole).
func Detail(e provider.Event, limit int) string {
	var d string
	switch {
	case e.Error != nil:
		d = string(e.Error.Class) + ": " + e.Error.Message
	case e.Kind == provider.EventTimerCreated && e.FireAt != 0 && e.Time != 0:
		d = "fires in " + ShortDuration(time.Duration(e.FireAt-e.Time)*time.Millisecond)
		if e.Reason != "" {
			d += " (" + e.Reason + ")"
		}
	case e.Kind == provider.EventTimerCreated && e.FireAt != 0:
		d = "fires " + time.UnixMilli(e.FireAt).UTC().Format(time.RFC3339)
	case e.Reason != "":
		d = e.Reason
	case e.Output != "":
		d = "-> " + e.Output
	case e.Input != "":
		d = e.Input
	}
	if e.Instance != "" {
		d = "instance " + e.Instance + " " + d
	}
	if r := []rune(d); limit > 0 && len(r) > limit {
		d = string(r[:limit-1]) + "…"
	}
	return d
}

// Registered lists name@version of each orchestration a worker registers,
// sorted.
func Registered(orchestrations map[string][]string) []string {
	var out []string
	for name, versions := range orchestrations {
		for _, v := range versions {
			out = append(out, name+"@"+v)
		}
	}
	slices.Sort(out)
	return out
}
