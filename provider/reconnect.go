package provider

// Reconnector is implemented by providers that can tell when their store is
// reachable again after a connection failure. Dispatchers sleeping in their
// backoff after failed fetches wake then, instead of at the end of a backoff
// that may have grown to many seconds.
type Reconnector interface {
	// Reconnected returns a channel closed at the next reconnection. Take it
	// before trying the store, so a reconnection during the try is not missed.
	Reconnected() <-chan struct{}
}
