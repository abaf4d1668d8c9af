package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// listen holds a dedicated connection LISTENing on the schema's channels and
// turns notifications into wake-ups. When the connection breaks it wakes
// everyone (a notification may have been lost) and reconnects with backoff;
// meanwhile fetchers fall back to polling.
func (p *Provider) listen(ctx context.Context, cfg *pgx.ConnConfig) {
	defer close(p.listenerDone)
	backoff := 100 * time.Millisecond
	var lostAt time.Time
	connected := func() {
		backoff = 100 * time.Millisecond
		if !lostAt.IsZero() {
			p.opts.Logger.Info("postgres listener reconnected", "schema", p.schema,
				"outage", time.Since(lostAt).Round(time.Millisecond).String())
			lostAt = time.Time{}
		}
	}
	for ctx.Err() == nil {
		err := p.listenOnce(ctx, cfg, connected)
		if ctx.Err() != nil {
			return
		}
		// One line when the connection goes and one when it is back, not one
		// per reconnection attempt.
		if lostAt.IsZero() {
			lostAt = time.Now()
			p.opts.Logger.Warn("postgres listener lost; polling until it reconnects", "schema", p.schema, "error", redact(err))
		} else {
			p.opts.Logger.Debug("postgres listener still down", "schema", p.schema, "error", redact(err))
		}
		p.wakeAll()
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return
		}
		// Short: dispatchers in backoff wait for this reconnection to resume.
		backoff = min(backoff*2, time.Second)
	}
}

func (p *Provider) listenOnce(ctx context.Context, cfg *pgx.ConnConfig, connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, kind := range channelSuffix {
		if _, err := conn.Exec(ctx, "LISTEN "+quoteIdent(p.channel(kind))); err != nil {
			return err
		}
	}
	connected()
	p.wakeAll() // work may have arrived while no one listened
	p.reconnected.Notify()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		for k, suffix := range channelSuffix {
			if n.Channel != p.channel(suffix) {
				continue
			}
			switch {
			case channelKind(k) == statusChannel:
				p.feed.publish(parseStatusPayload(n.Payload))
			case n.Payload == p.notifier.origin:
				continue // announce woke this provider's waiters before it sent this
			}
			p.signal(channelKind(k)).Notify()
		}
	}
}

func (p *Provider) wakeAll() {
	p.eng.OrchestratorWork.Notify()
	p.eng.WorkerWork.Notify()
	p.eng.StatusChanged.Notify()
}

// Reconnected implements provider.Reconnector: the listener connected (again).
func (p *Provider) Reconnected() <-chan struct{} { return p.reconnected.C() }
