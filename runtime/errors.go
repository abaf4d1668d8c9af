package runtime

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/duroxide/duroxide-go/provider"
)

// ErrorClass says who is responsible for a failure; see provider.ErrorClass.
type ErrorClass = provider.ErrorClass

const (
	ErrorApplication    = provider.ErrorApplication
	ErrorInfrastructure = provider.ErrorInfrastructure
	ErrorConfiguration  = provider.ErrorConfiguration
)

// TaskError is what awaiting a failed activity, sub-orchestration or timed-out
// attempt returns inside an orchestration.
type TaskError struct {
	// Task is "activity", "sub-orchestration" or "event".
	Task    string
	Name    string
	Class   ErrorClass
	Message string
	cause   error
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("%s %q failed (%s): %s", e.Task, e.Name, e.Class, e.Message)
}

// Unwrap exposes ErrTimeout for timed-out attempts.
func (e *TaskError) Unwrap() error { return e.cause }

// ErrTimeout is wrapped by the TaskError of an activity attempt that ran past
// its RetryPolicy.Timeout.
var ErrTimeout = errors.New("timed out")

// NondeterminismError reports that orchestration code no longer makes the
// decisions its history records: it was changed incompatibly, or depends on
// something other than its inputs and the context. It is a configuration error:
// the instance fails rather than corrupt its history.
type NondeterminismError struct {
	Instance    string
	ExecutionID int64
	EventID     int64
	// Expected is what the history records; Actual is what the code did.
	Expected string
	Actual   string
}

func (e *NondeterminismError) Error() string {
	return fmt.Sprintf("nondeterministic orchestration: instance %q execution %d, history event %d: expected %s, got %s",
		e.Instance, e.ExecutionID, e.EventID, e.Expected, e.Actual)
}

// Failure describes how an instance failed or was terminated.
type Failure struct {
	Class   ErrorClass `json:"class"`
	Message string     `json:"message"`
}

func (f *Failure) Error() string { return fmt.Sprintf("%s: %s", f.Class, f.Message) }

func encodeFailure(class ErrorClass, msg string) string {
	b, _ := json.Marshal(Failure{Class: class, Message: msg})
	return string(b)
}

func decodeFailure(output string) *Failure {
	var f Failure
	if err := json.Unmarshal([]byte(output), &f); err != nil || f.Message == "" {
		return &Failure{Class: ErrorApplication, Message: output}
	}
	return &f
}

// errorDetails converts an orchestration's or activity's error into what the
// history and the work item record.
func errorDetails(err error) *provider.ErrorDetails {
	var te *TaskError
	if errors.As(err, &te) {
		return &provider.ErrorDetails{Class: te.Class, Message: err.Error()}
	}
	var nd *NondeterminismError
	if errors.As(err, &nd) {
		return &provider.ErrorDetails{Class: ErrorConfiguration, Message: err.Error()}
	}
	var ce *configError
	if errors.As(err, &ce) {
		return &provider.ErrorDetails{Class: ErrorConfiguration, Message: err.Error()}
	}
	return &provider.ErrorDetails{Class: ErrorApplication, Message: err.Error()}
}

// configError marks a deployment problem: an unregistered name, a bad version.
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

func configErrorf(format string, args ...any) error {
	return &configError{msg: fmt.Sprintf(format, args...)}
}
