package notifytarget

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shardstore/shardstore/internal/notify"
)

// MySQL stores records in a MySQL or MariaDB table, with
// go-sql-driver/mysql (the maintained database/sql driver: pure Go,
// server-side prepared statements, TLS). The tables are MinIO's.
// Format namespace (default): (key_name VARCHAR(3072), key_hash CHAR(64)
// generated as SHA2(key_name, 256) with a unique key, value JSON; MinIO
// makes key_hash the primary key, which MariaDB refuses on a generated
// column, and a unique key upserts alike), one row
// per "bucket/key" upserted with {"Records":[<record>]} and deleted on
// an ObjectRemoved event. Format access: (event_time DATETIME, event_data
// JSON), one row per event. Created when missing. Statements run in
// autocommit: Send returns once the row is committed.
func MySQL() notify.Kind {
	return notify.Kind{Name: "mysql", Fields: mysqlFields, New: newMySQL}
}

var mysqlFields = []notify.Field{
	{Name: "dsn_string", Secret: true, Help: "data source name, user:password@tcp(host:port)/database; or the fields below"},
	{Name: "table", Required: true, Help: "table name (letters, digits and _, optionally database.table); created when missing"},
	{Name: "format", Help: "namespace (default: one row per object) or access (one row per event)"},
	{Name: "host", Help: "server host (when there is no dsn_string)"},
	{Name: "port", Help: "server port (default 3306)"},
	{Name: "username", Help: "user name"},
	{Name: "password", Secret: true, Help: "password"},
	{Name: "database", Help: "database name"},
	{Name: "max_open_connections", Help: "most connections kept open (default 2)"},
}

type mysqlTarget struct {
	id, format string
	cfg        *mysql.Config
	maxConns   int
	stmts      sqlStatements
	secrets    []string

	mu      sync.Mutex
	db      *sql.DB
	created bool
	closed  bool
}

func newMySQL(id string, m map[string]string) (notify.Target, error) {
	const kind = "mysql"
	if err := checkID(kind, id); err != nil {
		return nil, err
	}
	s, err := parse(kind, mysqlFields, m)
	if err != nil {
		return nil, err
	}
	t := &mysqlTarget{id: id, secrets: s.secrets()}
	if t.format, err = s.oneOf("format", formatNamespace, formatNamespace, formatAccess); err != nil {
		return nil, err
	}
	parts, err := s.identifier("table")
	if err != nil {
		return nil, err
	}
	if t.maxConns, err = s.integer("max_open_connections", 2, 1, 100); err != nil {
		return nil, err
	}
	if dsn := s.str("dsn_string"); dsn != "" {
		if t.cfg, err = mysql.ParseDSN(dsn); err != nil {
			// The driver's message may quote the DSN: never repeat it.
			return nil, s.errf("dsn_string", "not a valid MySQL data source name")
		}
	} else {
		if s.str("host") == "" || s.str("database") == "" {
			return nil, s.errf("dsn_string", "set dsn_string, or host and database (with username, password)")
		}
		if !validHost(s.str("host")) {
			return nil, s.errf("host", "not a host name or IP address")
		}
		port, err := s.integer("port", 3306, 1, 65535)
		if err != nil {
			return nil, err
		}
		t.cfg = mysql.NewConfig()
		t.cfg.User, t.cfg.Passwd, t.cfg.DBName = s.str("username"), s.str("password"), s.str("database")
		t.cfg.Net, t.cfg.Addr = "tcp", net.JoinHostPort(s.str("host"), strconv.Itoa(port))
	}
	// Real parameters, never values spliced into the SQL by the client;
	// no LOAD DATA LOCAL from this side.
	t.cfg.InterpolateParams = false
	t.cfg.AllowAllFiles = false
	if t.cfg.Timeout == 0 {
		t.cfg.Timeout = 5 * time.Second
	}
	t.cfg.Loc = time.UTC
	table := "`" + strings.Join(parts, "`.`") + "`"
	if t.format == formatNamespace {
		t.stmts = sqlStatements{
			create: "CREATE TABLE IF NOT EXISTS " + table + ` (
				key_name VARCHAR(3072) NOT NULL,
				key_hash CHAR(64) AS (SHA2(key_name, 256)) STORED,
				value JSON,
				UNIQUE KEY (key_hash))
				CHARACTER SET = utf8mb4 COLLATE = utf8mb4_bin ROW_FORMAT = Dynamic`,
			upsert: "INSERT INTO " + table + " (key_name, value) VALUES (?, ?) ON DUPLICATE KEY UPDATE value=VALUES(value)",
			remove: "DELETE FROM " + table + " WHERE key_hash = SHA2(?, 256)",
		}
	} else {
		t.stmts = sqlStatements{
			create: "CREATE TABLE IF NOT EXISTS " + table + " (event_time DATETIME NOT NULL, event_data JSON) ROW_FORMAT = Dynamic",
			insert: "INSERT INTO " + table + " (event_time, event_data) VALUES (?, ?)",
		}
	}
	return t, nil
}

func (t *mysqlTarget) ARN() string { return arn(t.id, "mysql") }

// conn opens the database handle on first use (database/sql dials per
// statement as needed) and creates the table once the server answers.
func (t *mysqlTarget) conn(ctx context.Context) (*sql.DB, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("mysql target %s is closed", t.id)
	}
	if t.db == nil {
		c, err := mysql.NewConnector(t.cfg)
		if err != nil {
			return nil, fmt.Errorf("mysql: %w", scrub(err, t.secrets))
		}
		t.db = sql.OpenDB(c)
		t.db.SetMaxOpenConns(t.maxConns)
		t.db.SetMaxIdleConns(t.maxConns)
		t.db.SetConnMaxIdleTime(5 * time.Minute)
	}
	if !t.created {
		if _, err := t.db.ExecContext(ctx, t.stmts.create); err != nil {
			return nil, fmt.Errorf("mysql create table: %w", scrub(err, t.secrets))
		}
		t.created = true
	}
	return t.db, nil
}

func (t *mysqlTarget) Send(ctx context.Context, d notify.Delivery) error {
	db, err := t.conn(ctx)
	if err != nil {
		return err
	}
	err = t.stmts.send(ctx, t.format, d, func(ctx context.Context, stmt string, args ...any) error {
		_, err := db.ExecContext(ctx, stmt, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("mysql %s: %w", t.format, scrub(err, t.secrets))
	}
	return nil
}

func (t *mysqlTarget) Healthy(ctx context.Context) error {
	db, err := t.conn(ctx)
	if err != nil {
		return err
	}
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("mysql ping: %w", scrub(err, t.secrets))
	}
	return nil
}

func (t *mysqlTarget) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.db == nil {
		return nil
	}
	err := t.db.Close()
	t.db = nil
	return err
}
