package notifytarget_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shardstore/shardstore/internal/notify"
	"github.com/shardstore/shardstore/internal/notifytarget"
	"github.com/shardstore/shardstore/internal/notifytarget/targettest"
)

const pgPassword = "pg-Secret-pw"

// TestPostgreSQL runs the suite against a real PostgreSQL (Debian's
// postgresql), one cluster made with initdb and started once, in both
// formats, through a connection string and through the separate fields.
func TestPostgreSQL(t *testing.T) {
	bin := targettest.Find(t, targettest.Program{
		Name: "postgres", Paths: []string{"/usr/lib/postgresql/*/bin/postgres"},
		Apt: []string{"postgresql"}, Require: "SHARDSTORE_REQUIRE_POSTGRES",
	})
	bindir := filepath.Dir(bin)
	cred, chown := targettest.Unprivileged(t, "postgres")
	dir := targettest.TempDir(t)
	data := filepath.Join(dir, "data")
	if err := os.WriteFile(filepath.Join(dir, "pw"), []byte(pgPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	chown(dir)
	targettest.RunCommand(t, cred, dir, filepath.Join(bindir, "initdb"), "-D", data, "-U", "shard",
		"--auth=scram-sha-256", "--pwfile", filepath.Join(dir, "pw"), "--no-sync")
	port := targettest.FreePort(t)
	srv := &targettest.Process{
		Name: "postgres", Addr: fmt.Sprintf("127.0.0.1:%d", port), Credential: cred, Dir: dir,
		Args: []string{bin, "-D", data, "-h", "127.0.0.1", "-p", fmt.Sprint(port), "-k", dir,
			"-c", "fsync=off", "-c", "shared_buffers=16MB", "-c", "max_connections=40"},
	}
	conn := fmt.Sprintf("postgres://shard:%s@%s/postgres?sslmode=disable", pgPassword, srv.Addr)
	srv.Ready = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, conn)
		if err != nil {
			return err
		}
		return c.Close(ctx)
	}
	srv.Start(t)
	t.Cleanup(func() { srv.Stop(t) })

	query := func(t *testing.T, sql string) [][2]string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, conn)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		defer c.Close(ctx)
		rows, err := c.Query(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		var out [][2]string
		for rows.Next() {
			var a, b string
			if err := rows.Scan(&a, &b); err != nil {
				t.Fatal(err)
			}
			out = append(out, [2]string{a, b})
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	oneRecord := func(t *testing.T, v string) []byte {
		var env struct{ Records []json.RawMessage }
		if err := json.Unmarshal([]byte(v), &env); err != nil || len(env.Records) != 1 {
			t.Fatalf("value %.200q is not {\"Records\":[record]}", v)
		}
		return env.Records[0]
	}
	record := func(d notify.Delivery) []byte { return d.Record }

	t.Run("namespace", func(t *testing.T) {
		settings := map[string]string{"connection_string": conn, "table": "shardstore_ns"}
		targettest.Run(t, targettest.Config{
			New: newTarget(notifytarget.PostgreSQL(), "ns", settings), Format: targettest.Namespace,
			Body: record, JSON: true,
			Read: func(t *testing.T) []targettest.Received {
				var out []targettest.Received
				for _, r := range query(t, `SELECT key, value::text FROM shardstore_ns`) {
					out = append(out, targettest.Received{Key: r[0], Body: oneRecord(t, r[1])})
				}
				return out
			},
			Stop: func(t *testing.T) { srv.Stop(t) }, Start: func(t *testing.T) { srv.Start(t) },
		})
	})
	t.Run("access", func(t *testing.T) {
		// The separate fields instead of a connection string, and a
		// schema-qualified, mixed-case name (folded as PostgreSQL does).
		settings := map[string]string{"host": "127.0.0.1", "port": fmt.Sprint(port), "username": "shard",
			"password": pgPassword, "database": "postgres", "table": "public.Shardstore_Access", "format": "access"}
		targettest.Run(t, targettest.Config{
			New: newTarget(notifytarget.PostgreSQL(), "access", settings), Body: record, JSON: true,
			Read: func(t *testing.T) []targettest.Received {
				var out []targettest.Received
				// Insertion order: the physical order of a table only
				// appended to (ctid), as event_time may repeat.
				for _, r := range query(t, `SELECT event_time::text, event_data::text FROM shardstore_access ORDER BY ctid`) {
					out = append(out, targettest.Received{Body: oneRecord(t, r[1])})
				}
				return out
			},
			Stop: func(t *testing.T) { srv.Stop(t) }, Start: func(t *testing.T) { srv.Start(t) },
		})
	})
	t.Run("WrongPassword", func(t *testing.T) {
		tg, err := notifytarget.PostgreSQL().New("bad", map[string]string{"host": "127.0.0.1", "port": fmt.Sprint(port),
			"username": "shard", "password": "Wrong-Secret-123", "database": "postgres", "table": "t"})
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		checkRefused(t, tg.Send(ctx, targettest.Delivery("s3:ObjectCreated:Put", "b", "k", 1, 1)), "Wrong-Secret-123")
	})
	t.Run("InjectionInKeyIsData", func(t *testing.T) {
		tg := newTarget(notifytarget.PostgreSQL(), "inj", map[string]string{"connection_string": conn, "table": "shardstore_inj"})(t)
		defer tg.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		evil := "x'); DROP TABLE shardstore_inj; --"
		if err := tg.Send(ctx, targettest.Delivery("s3:ObjectCreated:Put", "b", evil, 1, 1)); err != nil {
			t.Fatal(err)
		}
		rows := query(t, `SELECT key, value::text FROM shardstore_inj`)
		if len(rows) != 1 || rows[0][0] != "b/"+evil {
			t.Fatalf("rows %q", rows)
		}
	})
}
