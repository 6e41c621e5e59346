package notifytarget

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shardstore/shardstore/internal/notify"
)

// PostgreSQL stores records in a table, with pgx (the maintained pure-Go
// PostgreSQL driver: context-aware, speaks jsonb and the extended
// protocol natively). Format namespace (default): the table (key VARCHAR
// PRIMARY KEY, value JSONB), one row per "bucket/key" upserted with
// {"Records":[<record>]} and deleted on an ObjectRemoved event. Format
// access: (event_time TIMESTAMPTZ, event_data JSONB), one row per event.
// MinIO's tables, created when missing. Every statement runs on its own
// (autocommit): Send returns once the row is committed.
func PostgreSQL() notify.Kind {
	return notify.Kind{Name: "postgresql", Config: "postgres", Fields: postgresFields, New: newPostgreSQL}
}

var postgresFields = []notify.Field{
	{Name: "connection_string", Secret: true, Help: "libpq connection string or URL (host=... user=... or postgres://...); or the fields below"},
	{Name: "table", Required: true, Help: "table name (letters, digits and _, optionally schema.table); created when missing"},
	{Name: "format", Help: "namespace (default: one row per object) or access (one row per event)"},
	{Name: "host", Help: "server host (when there is no connection_string)"},
	{Name: "port", Help: "server port (default 5432)"},
	{Name: "username", Help: "user name"},
	{Name: "password", Secret: true, Help: "password"},
	{Name: "database", Help: "database name"},
	{Name: "max_open_connections", Help: "most connections kept open (default 2)"},
}

type sqlStatements struct {
	create, upsert, remove, insert string
}

// send runs the statement d needs in format through exec (the SQL
// kinds' client call): an access-format insert of the event, or a
// namespace-format delete or upsert of its key.
func (st sqlStatements) send(ctx context.Context, format string, d notify.Delivery, exec func(ctx context.Context, stmt string, args ...any) error) error {
	switch {
	case format == formatAccess:
		return exec(ctx, st.insert, d.Time.UTC(), string(records(d)))
	case d.Removed():
		return exec(ctx, st.remove, d.Key)
	default:
		return exec(ctx, st.upsert, d.Key, string(records(d)))
	}
}

type postgresTarget struct {
	id, format string
	config     *pgxpool.Config
	stmts      sqlStatements
	secrets    []string

	mu      sync.Mutex
	pool    *pgxpool.Pool
	created bool
	closed  bool
}

func newPostgreSQL(id string, m map[string]string) (notify.Target, error) {
	const kind = "postgresql"
	if err := checkID(kind, id); err != nil {
		return nil, err
	}
	s, err := parse(kind, postgresFields, m)
	if err != nil {
		return nil, err
	}
	t := &postgresTarget{id: id, secrets: s.secrets()}
	if t.format, err = s.oneOf("format", formatNamespace, formatNamespace, formatAccess); err != nil {
		return nil, err
	}
	parts, err := s.identifier("table")
	if err != nil {
		return nil, err
	}
	maxConns, err := s.integer("max_open_connections", 2, 1, 100)
	if err != nil {
		return nil, err
	}
	conn := s.str("connection_string")
	if conn == "" {
		if s.str("host") == "" {
			return nil, s.errf("connection_string", "set connection_string, or host (with username, password, database)")
		}
		if !validHost(s.str("host")) {
			return nil, s.errf("host", "not a host name or IP address")
		}
		port, err := s.integer("port", 5432, 1, 65535)
		if err != nil {
			return nil, err
		}
		// A URL built from parts, each escaped: no value can add a
		// parameter of its own.
		u := "postgres://" + urlUserinfo(s.str("username"), s.str("password")) +
			net.JoinHostPort(s.str("host"), strconv.Itoa(port)) + "/" + urlPathEscape(s.str("database"))
		conn = u
		t.secrets = append(t.secrets, u)
	}
	cfg, err := pgxpool.ParseConfig(conn)
	if err != nil {
		// pgx's message may quote the string: never repeat it.
		return nil, s.errf("connection_string", "not a valid PostgreSQL connection string or URL")
	}
	cfg.MaxConns = int32(maxConns)
	cfg.MinConns = 0
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "shardstore-notify"
	t.config = cfg
	// PostgreSQL folds unquoted names to lower case; quoting the folded
	// name reaches the same table MinIO's unquoted statements do.
	for i := range parts {
		parts[i] = strings.ToLower(parts[i])
	}
	table := pgx.Identifier(parts).Sanitize()
	if t.format == formatNamespace {
		t.stmts = sqlStatements{
			create: `CREATE TABLE IF NOT EXISTS ` + table + ` (key VARCHAR PRIMARY KEY, value JSONB)`,
			upsert: `INSERT INTO ` + table + ` (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
			remove: `DELETE FROM ` + table + ` WHERE key = $1`,
		}
	} else {
		t.stmts = sqlStatements{
			create: `CREATE TABLE IF NOT EXISTS ` + table + ` (event_time TIMESTAMP WITH TIME ZONE NOT NULL, event_data JSONB)`,
			insert: `INSERT INTO ` + table + ` (event_time, event_data) VALUES ($1, $2)`,
		}
	}
	return t, nil
}

func (t *postgresTarget) ARN() string { return arn(t.id, "postgresql") }

// conn makes the pool on first use (pgxpool dials per acquire) and
// creates the table once the server answers.
func (t *postgresTarget) conn(ctx context.Context) (*pgxpool.Pool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("postgresql target %s is closed", t.id)
	}
	if t.pool == nil {
		p, err := pgxpool.NewWithConfig(context.Background(), t.config)
		if err != nil {
			return nil, fmt.Errorf("postgresql pool: %w", scrub(err, t.secrets))
		}
		t.pool = p
	}
	if !t.created {
		if _, err := t.pool.Exec(ctx, t.stmts.create); err != nil {
			return nil, fmt.Errorf("postgresql create table: %w", scrub(err, t.secrets))
		}
		t.created = true
	}
	return t.pool, nil
}

func (t *postgresTarget) Send(ctx context.Context, d notify.Delivery) error {
	p, err := t.conn(ctx)
	if err != nil {
		return err
	}
	err = t.stmts.send(ctx, t.format, d, func(ctx context.Context, stmt string, args ...any) error {
		_, err := p.Exec(ctx, stmt, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgresql %s: %w", t.format, scrub(err, t.secrets))
	}
	return nil
}

func (t *postgresTarget) Healthy(ctx context.Context) error {
	p, err := t.conn(ctx)
	if err != nil {
		return err
	}
	if err := p.Ping(ctx); err != nil {
		return fmt.Errorf("postgresql ping: %w", scrub(err, t.secrets))
	}
	return nil
}

func (t *postgresTarget) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.pool != nil {
		t.pool.Close()
		t.pool = nil
	}
	return nil
}
