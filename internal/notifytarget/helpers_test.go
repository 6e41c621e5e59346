package notifytarget_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// checkRefused: a refused login or connection is an error that does not
// carry the secret.
func checkRefused(t *testing.T, err error, secret string) {
	t.Helper()
	if err == nil {
		t.Fatal("Send with a wrong secret returned nil")
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("the error echoes the secret: %v", err)
	}
	t.Logf("refused as expected: %v", err)
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return c
}
