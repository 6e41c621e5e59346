package notifytarget_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/notify"
	"github.com/shardstore/shardstore/internal/notifytarget"
	"github.com/shardstore/shardstore/internal/notifytarget/targettest"
)

// TestMySQL runs the suite against a real MariaDB (Debian's
// mariadb-server), installed into a temporary data directory with
// mariadb-install-db and started once, in both formats, through a DSN
// and through the separate fields.
func TestMySQL(t *testing.T) {
	srv := targettest.StartMariaDB(t)
	dsn := srv.URL
	port := srv.Addr[strings.LastIndex(srv.Addr, ":")+1:]
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	query := func(t *testing.T, q string) [][2]string {
		var out [][2]string
		var err error
		for try := 0; try < 20; try++ {
			out, err = queryRows(db, q)
			if err == nil {
				return out
			}
			time.Sleep(250 * time.Millisecond)
		}
		t.Fatalf("%s: %v", q, err)
		return nil
	}
	oneRecord := func(t *testing.T, v string) []byte {
		var env struct{ Records []json.RawMessage }
		if err := json.Unmarshal([]byte(v), &env); err != nil || len(env.Records) != 1 {
			t.Fatalf("value %.200q is not {\"Records\":[record]}", v)
		}
		return env.Records[0]
	}
	record := func(d notify.Delivery) []byte { return d.Record }
	stop := func(t *testing.T) { srv.Stop(t) }
	start := func(t *testing.T) { srv.Start(t) }

	t.Run("namespace", func(t *testing.T) {
		targettest.Run(t, targettest.Config{
			New:    newTarget(notifytarget.MySQL(), "ns", map[string]string{"dsn_string": dsn, "table": "shardstore_ns"}),
			Format: targettest.Namespace, Body: record, JSON: true,
			Read: func(t *testing.T) []targettest.Received {
				var out []targettest.Received
				for _, r := range query(t, "SELECT key_name, value FROM shardstore_ns") {
					out = append(out, targettest.Received{Key: r[0], Body: oneRecord(t, r[1])})
				}
				return out
			},
			Stop: stop, Start: start,
		})
	})
	t.Run("access", func(t *testing.T) {
		settings := map[string]string{"host": "127.0.0.1", "port": port, "username": "shard",
			"password": srv.Password, "database": "events", "table": "events.shardstore_access", "format": "access"}
		targettest.Run(t, targettest.Config{
			New:  newTarget(notifytarget.MySQL(), "access", settings),
			Body: record, JSON: true,
			Read: func(t *testing.T) []targettest.Received {
				var out []targettest.Received
				// A heap table without a key only appended to reads
				// back in insertion order.
				for _, r := range query(t, "SELECT CAST(event_time AS CHAR), event_data FROM shardstore_access") {
					out = append(out, targettest.Received{Body: oneRecord(t, r[1])})
				}
				return out
			},
			Stop: stop, Start: start,
		})
	})
	t.Run("WrongPassword", func(t *testing.T) {
		tg, err := notifytarget.MySQL().New("bad", map[string]string{"host": "127.0.0.1", "port": port,
			"username": "shard", "password": "Wrong-Secret-123", "database": "events", "table": "t"})
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		checkRefused(t, tg.Send(ctx, targettest.Delivery("s3:ObjectCreated:Put", "b", "k", 1, 1)), "Wrong-Secret-123")
	})
	t.Run("InjectionInKeyIsData", func(t *testing.T) {
		tg := newTarget(notifytarget.MySQL(), "inj", map[string]string{"dsn_string": dsn, "table": "shardstore_inj"})(t)
		defer tg.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		evil := "x'); DROP TABLE shardstore_inj; -- \\' `"
		if err := tg.Send(ctx, targettest.Delivery("s3:ObjectCreated:Put", "b", evil, 1, 1)); err != nil {
			t.Fatal(err)
		}
		rows := query(t, "SELECT key_name, value FROM shardstore_inj")
		if len(rows) != 1 || rows[0][0] != "b/"+evil {
			t.Fatalf("rows %q", rows)
		}
	})
}

func queryRows(db *sql.DB, q string) ([][2]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var a, b string
		if err := rows.Scan(&a, &b); err != nil {
			return nil, err
		}
		out = append(out, [2]string{a, b})
	}
	return out, rows.Err()
}
