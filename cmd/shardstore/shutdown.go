package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

const (
	// defaultShutdownWait is how long a stop waits for in-flight requests.
	defaultShutdownWait = 30 * time.Second
	// shutdownReportEvery is how often a waiting stop says what it waits for.
	shutdownReportEvery = 3 * time.Second
	// engineCloseWait bounds closing the drives at exit.
	engineCloseWait = 10 * time.Second
)

// stoppable is what shutdown needs of the S3 server.
type stoppable interface {
	// Shutdown stops accepting connections and waits for requests in
	// flight until ctx ends, then cuts the rest.
	Shutdown(ctx context.Context) error
	InFlight() int
}

// shutdown stops srv after the first signal sig: no new connections,
// requests in flight may finish for up to wait, with a line every
// `every` saying how many are left. A second signal, or the end of the
// wait, cuts what is left; that is reported, and is not an error: a cut
// request was never answered, so nothing acknowledged is lost.
func shutdown(w io.Writer, srv stoppable, sig os.Signal, sigs <-chan os.Signal, wait, every time.Duration) error {
	start := time.Now()
	fmt.Fprintf(w, "shutdown: %v received: accepting no new connections; waiting up to %v for %s to finish (send the signal again to stop at once)\n",
		sig, wait, plural(srv.InFlight(), "request in flight", "requests in flight"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	tick := time.NewTicker(every)
	defer tick.Stop()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	cutReason, cut := "", 0
	cutNow := func(reason string) {
		if cutReason == "" {
			cutReason, cut = reason, srv.InFlight()
			cancel()
		}
	}
	for {
		select {
		case err := <-done:
			if cutReason == "" {
				return err
			}
			fmt.Fprintf(w, "shutdown: %s: cut %s after %v; their clients saw the connection drop and got no answer, so nothing they sent was acknowledged\n",
				cutReason, plural(cut, "request", "requests"), time.Since(start).Round(time.Millisecond))
			return nil
		case <-tick.C:
			fmt.Fprintf(w, "shutdown: waiting for %s (%v of at most %v)\n",
				plural(srv.InFlight(), "request in flight", "requests in flight"), time.Since(start).Round(time.Second), wait)
		case <-deadline.C:
			cutNow(fmt.Sprintf("the %v wait (--shutdown-timeout) is over", wait))
		case s := <-sigs:
			cutNow(fmt.Sprintf("second signal (%v)", s))
		}
	}
}
