package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/shardstore/shardstore/internal/certs"
	"github.com/shardstore/shardstore/internal/console"
)

// defaultConsoleAddress is where the web console listens unless
// --console-address says otherwise ("" turns it off).
const defaultConsoleAddress = "127.0.0.1:9001"

// consoleServer is the running web console.
type consoleServer struct {
	http *http.Server
	done chan error
}

// startConsole serves the console on addr. When the address is the
// default (not chosen by the operator) and already taken, say by a second
// server on the machine, the S3 server starts without a console and
// says so; a chosen address that cannot be had stops the start.
func startConsole(stdout, stderr io.Writer, addr string, chosen bool, store *certs.Store, cfg console.Config, log *slog.Logger) (*consoleServer, error) {
	if addr == "" {
		return nil, nil
	}
	c, err := console.New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if !chosen {
			fmt.Fprintf(stderr, "Console: not started: %v (choose another with --console-address HOST:PORT, or turn it off with --console-address \"\")\n", err)
			return nil, nil
		}
		return nil, fmt.Errorf("console: listen on %s: %w", addr, err)
	}
	cs := &consoleServer{done: make(chan error, 1), http: &http.Server{
		Handler:           c,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}}
	fmt.Fprintf(stdout, "Console: %s://%s\n", scheme(store), endpointHost(ln.Addr()))
	ln = serveListener(ln, store)
	go func() {
		err := cs.http.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		cs.done <- err
	}()
	return cs, nil
}

// stop stops accepting console connections and waits for those in
// flight until ctx ends, then cuts them.
func (cs *consoleServer) stop(ctx context.Context) error {
	if cs == nil {
		return nil
	}
	err := cs.http.Shutdown(ctx)
	if err != nil {
		_ = cs.http.Close()
	}
	if serr := <-cs.done; serr != nil {
		err = errors.Join(err, serr)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil // cut at the shutdown deadline, like the S3 requests
	}
	return err
}
