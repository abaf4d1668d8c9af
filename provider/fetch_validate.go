package provider

// Validate reports whether r is a fetch the contract defines: nil, or an
// *Error wrapping ErrInvalidArgument that says what is wrong. A store
// checks it before it reads or locks anything.
func (r FetchRequest) Validate() error {
	switch {
	case len(r.Deliver) > 0:
		return r.validateDeliver()
	case r.Instance != "":
		// A named fetch never waits: PollFor does not apply.
		return r.validateLocking("fetch instance item")
	}
	const op = "fetch orchestration items"
	if err := r.validateLocking(op); err != nil {
		return err
	}
	if r.PollFor < 0 {
		return invalidRequest(op, "", "poll timeout must not be negative, got %v", r.PollFor)
	}
	if err := r.Capability.Validate(); err != nil {
		return invalidRequest(op, "", "%v", err)
	}
	return nil
}

// validateLocking checks a fetch that locks what it returns.
func (r FetchRequest) validateLocking(op string) error {
	switch {
	case r.Max < 1:
		return invalidRequest(op, r.Instance, "max must be at least 1, got %d", r.Max)
	case r.LockFor <= 0:
		return invalidRequest(op, r.Instance, "lock timeout must be positive, got %v", r.LockFor)
	}
	return nil
}

// validateDeliver checks a fetch that asks the cache alone for a turn.
func (r FetchRequest) validateDeliver() error {
	const op = "fetch cached turn"
	last := r.Deliver[len(r.Deliver)-1]
	switch {
	case !r.FromCache || r.Instance == "":
		return invalidRequest(op, r.Instance, "Deliver asks the cache for a named instance: FromCache and Instance are required")
	case r.Max < 1:
		return invalidRequest(op, r.Instance, "max must be at least 1, got %d", r.Max)
	case last.Instance != r.Instance:
		return invalidRequest(op, r.Instance, "the message to deliver is for instance %q", last.Instance)
	}
	return nil
}
