package notifytarget_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shardstore/shardstore/internal/notify"
	"github.com/shardstore/shardstore/internal/notifytarget"
	"github.com/shardstore/shardstore/internal/notifytarget/targettest"
)

// TestPostgreSQL runs the suite against a real PostgreSQL (Debian's
// postgresql), one cluster made with initdb and started once, in both
// formats, through a connection string and through the separate fields.
func TestPostgreSQL(t *testing.T) {
	srv := targettest.StartPostgreSQL(t)
	conn := srv.URL
	port := srv.Addr[strings.LastIndex(srv.Addr, ":")+1:]

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
		settings := map[string]string{"host": "127.0.0.1", "port": port, "username": "shard",
			"password": srv.Password, "database": "postgres", "table": "public.Shardstore_Access", "format": "access"}
		// Insertion order: a sequence number the server assigns at each
		// INSERT (a column the target does not name), as event_time may
		// repeat and the physical order (ctid) of rows that concurrent
		// Sends insert through different connections is not theirs.
		query(t, `CREATE TABLE IF NOT EXISTS shardstore_access (event_time TIMESTAMP WITH TIME ZONE NOT NULL, event_data JSONB, arrival BIGSERIAL)`)
		targettest.Run(t, targettest.Config{
			New: newTarget(notifytarget.PostgreSQL(), "access", settings), Body: record, JSON: true,
			Read: func(t *testing.T) []targettest.Received {
				var out []targettest.Received
				for _, r := range query(t, `SELECT event_time::text, event_data::text FROM shardstore_access ORDER BY arrival`) {
					out = append(out, targettest.Received{Body: oneRecord(t, r[1])})
				}
				return out
			},
			Stop: func(t *testing.T) { srv.Stop(t) }, Start: func(t *testing.T) { srv.Start(t) },
		})
	})
	t.Run("WrongPassword", func(t *testing.T) {
		tg, err := notifytarget.PostgreSQL().New("bad", map[string]string{"host": "127.0.0.1", "port": port,
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
