package notifytarget_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/notify"
	"github.com/shardstore/shardstore/internal/notifytarget"
)

// valid is a working set of settings of each kind (no system needs to
// answer: New connects lazily).
var valid = map[string]map[string]string{
	"nats":       {"address": "127.0.0.1:4222", "subject": "events", "username": "u", "password": "pw-Secret-1"},
	"redis":      {"address": "127.0.0.1:6379", "key": "events", "password": "pw-Secret-1"},
	"postgresql": {"connection_string": "postgres://u:pw-Secret-1@127.0.0.1:5432/db", "table": "events"},
	"mysql":      {"dsn_string": "u:pw-Secret-1@tcp(127.0.0.1:3306)/db", "table": "events"},
	"amqp":       {"url": "amqp://u:pw-Secret-1@127.0.0.1:5672/", "exchange": "events", "routing_key": "k"},
	"mqtt":       {"broker": "tcp://127.0.0.1:1883", "topic": "events", "username": "u", "password": "pw-Secret-1"},
	"webhook":    {"endpoint": "https://hooks.example.com/s3", "auth_token": "pw-Secret-1"},
	"kafka":      {"brokers": "127.0.0.1:9092", "topic": "events", "sasl": "on", "sasl_username": "u", "sasl_password": "pw-Secret-1"},
}

const hostileSecret = "Hostile-Secret-9f3e"

// TestKindsRefuseHostileValues: every field of every kind refuses an
// over-long value, a control character and invalid UTF-8, with an
// error that names the field, wraps ErrSetting and never carries the
// value.
func TestKindsRefuseHostileValues(t *testing.T) {
	hostile := map[string]string{
		"huge":    strings.Repeat("A", 5000) + hostileSecret,
		"nul":     "a\x00b" + hostileSecret,
		"newline": "a\nb" + hostileSecret,
		"escape":  "\x1b[31m" + hostileSecret,
		"badutf8": "\xff\xfe" + hostileSecret,
	}
	for _, k := range notifytarget.All() {
		base, ok := valid[k.Name]
		if !ok {
			t.Fatalf("kind %s has no valid settings in this test", k.Name)
		}
		if _, err := k.New("1", base); err != nil {
			t.Fatalf("%s: the valid settings are refused: %v", k.Name, err)
		}
		for _, f := range k.Fields {
			for name, v := range hostile {
				m := clone(base)
				m[f.Name] = v
				_, err := k.New("1", m)
				checkSettingErr(t, k.Name+" "+f.Name+" "+name, err, f.Name)
			}
		}
		for _, id := range []string{"", "a/b", "a:b", strings.Repeat("x", 65), "id\n", "ü"} {
			_, err := k.New(id, base)
			checkSettingErr(t, k.Name+" id "+id, err, "")
		}
	}
}

// kindCase is one hostile or mistaken setting of one kind.
type kindCase struct {
	kind, name string
	set        map[string]string // over the kind's valid settings; "" deletes
	ok         bool
}

func runKindCases(t *testing.T, cases []kindCase) {
	t.Helper()
	kinds := map[string]notify.Kind{}
	for _, k := range notifytarget.All() {
		kinds[k.Name] = k
	}
	for _, c := range cases {
		t.Run(c.kind+"/"+c.name, func(t *testing.T) {
			k, ok := kinds[c.kind]
			if !ok {
				t.Fatalf("no kind %s in All()", c.kind)
			}
			m := clone(valid[c.kind])
			for key, v := range c.set {
				if v == "" {
					delete(m, key)
				} else {
					m[key] = v
				}
			}
			tg, err := k.New("1", m)
			if c.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if err := tg.Close(); err != nil {
					t.Fatal(err)
				}
				return
			}
			field := ""
			for key := range c.set {
				field = key
			}
			if len(c.set) != 1 {
				field = ""
			}
			checkSettingErr(t, c.name, err, field)
		})
	}
}

func checkSettingErr(t *testing.T, what string, err error, field string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted", what)
		return
	}
	if !errors.Is(err, notifytarget.ErrSetting) {
		t.Errorf("%s: error does not wrap ErrSetting: %v", what, err)
	}
	if strings.Contains(err.Error(), hostileSecret) || strings.Contains(err.Error(), "pw-Secret") {
		t.Errorf("%s: error echoes the value: %v", what, err)
	}
	if field != "" && !strings.Contains(err.Error(), field) {
		t.Errorf("%s: error does not name the field %s: %v", what, field, err)
	}
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestNATSSettings(t *testing.T) {
	runKindCases(t, []kindCase{
		{"nats", "default port", map[string]string{"address": "localhost"}, true},
		{"nats", "nats scheme", map[string]string{"address": "nats://127.0.0.1:4222"}, true},
		{"nats", "ipv6", map[string]string{"address": "[::1]:4222"}, true},
		{"nats", "no address", map[string]string{"address": ""}, false},
		{"nats", "port 0", map[string]string{"address": "127.0.0.1:0"}, false},
		{"nats", "port too big", map[string]string{"address": "127.0.0.1:70000"}, false},
		{"nats", "url with path", map[string]string{"address": "http://h/x"}, false},
		{"nats", "space in host", map[string]string{"address": "a b:4222"}, false},
		{"nats", "userinfo in host", map[string]string{"address": "u:" + hostileSecret + "@h:4222"}, false},
		{"nats", "wildcard subject", map[string]string{"subject": "events.>"}, false},
		{"nats", "star subject", map[string]string{"subject": "a.*.b"}, false},
		{"nats", "empty token", map[string]string{"subject": "a..b"}, false},
		{"nats", "space in subject", map[string]string{"subject": "a b"}, false},
		{"nats", "long subject", map[string]string{"subject": strings.Repeat("s", 300)}, false},
		{"nats", "no subject", map[string]string{"subject": ""}, false},
		{"nats", "jetstream on", map[string]string{"jetstream": "on"}, true},
		{"nats", "jetstream maybe", map[string]string{"jetstream": "maybe"}, false},
		{"nats", "token and user", map[string]string{"token": hostileSecret}, false},
		{"nats", "ping interval", map[string]string{"ping_interval": "30s"}, true},
		{"nats", "ping interval negative", map[string]string{"ping_interval": "-5s"}, false},
		{"nats", "ping interval huge", map[string]string{"ping_interval": "99999999999999999999"}, false},
		{"nats", "tls missing CA file", map[string]string{"tls": "on", "cert_authority": "/nonexistent/ca.pem"}, false},
		{"nats", "client cert without key", map[string]string{"client_cert": "/etc/hostname"}, false},
		{"nats", "tls on", map[string]string{"tls": "on"}, true},
		{"nats", "streaming on", map[string]string{"streaming": "on"}, false},
		{"nats", "streaming off", map[string]string{"streaming": "off", "streaming_cluster_id": "c"}, true},
		{"nats", "nkey seed missing", map[string]string{"nkey_seed": "/nonexistent/seed"}, false},
	})
}

func TestRedisSettings(t *testing.T) {
	runKindCases(t, []kindCase{
		{"redis", "default port", map[string]string{"address": "redis.example"}, true},
		{"redis", "access", map[string]string{"format": "ACCESS"}, true},
		{"redis", "unknown format", map[string]string{"format": "json"}, false},
		{"redis", "no key", map[string]string{"key": ""}, false},
		{"redis", "key with space", map[string]string{"key": "a b"}, false},
		{"redis", "huge key", map[string]string{"key": strings.Repeat("k", 600)}, false},
		{"redis", "url address", map[string]string{"address": "redis://:" + hostileSecret + "@h:6379/0"}, false},
		{"redis", "bad port", map[string]string{"address": "h:-1"}, false},
		{"redis", "user with space", map[string]string{"user": "a b"}, false},
	})
}

// badTables are table names that must never reach SQL.
var badTables = []string{
	"events; DROP TABLE x", "events--", "ev\"ents", "ev`ents", "ev'ents", "a.b.c", ".events", "events.",
	"1events", "ev ents", "ev-ents", "\"quoted\"", "ev$nts", "évents", strings.Repeat("t", 64), "a.",
}

func TestPostgreSQLSettings(t *testing.T) {
	cases := []kindCase{
		{"postgresql", "schema.table", map[string]string{"table": "public.events"}, true},
		{"postgresql", "keyword-like name", map[string]string{"table": "select"}, true},
		{"postgresql", "access", map[string]string{"format": "access"}, true},
		{"postgresql", "bad format", map[string]string{"format": "xml"}, false},
		{"postgresql", "no table", map[string]string{"table": ""}, false},
		{"postgresql", "garbage connection string", map[string]string{"connection_string": "postgres://u:" + hostileSecret + "@h:99999999/db"}, false},
		{"postgresql", "unterminated quote", map[string]string{"connection_string": "host='h password=" + hostileSecret}, false},
		{"postgresql", "fields", map[string]string{"connection_string": "", "host": "db.local", "port": "5433", "username": "u", "password": "p@ss/w:rd?x=y", "database": "d b"}, true},
		{"postgresql", "nothing to connect to", map[string]string{"connection_string": ""}, false},
		{"postgresql", "bad host", map[string]string{"connection_string": "", "host": "h/x?sslmode=disable"}, false},
		{"postgresql", "bad port", map[string]string{"connection_string": "", "host": "h", "port": "5432x"}, false},
		{"postgresql", "max connections", map[string]string{"max_open_connections": "100000"}, false},
	}
	for _, bad := range badTables {
		cases = append(cases, kindCase{"postgresql", "table " + bad, map[string]string{"table": bad}, false})
	}
	runKindCases(t, cases)
}

func TestMySQLSettings(t *testing.T) {
	cases := []kindCase{
		{"mysql", "db.table", map[string]string{"table": "db.events"}, true},
		{"mysql", "access", map[string]string{"format": "Access"}, true},
		{"mysql", "bad format", map[string]string{"format": "csv"}, false},
		{"mysql", "no table", map[string]string{"table": ""}, false},
		{"mysql", "garbage dsn", map[string]string{"dsn_string": "u:" + hostileSecret + "@tcp(h:3306"}, false},
		{"mysql", "dsn without slash", map[string]string{"dsn_string": "u:" + hostileSecret + "@tcp(h:3306)"}, false},
		{"mysql", "fields", map[string]string{"dsn_string": "", "host": "db.local", "port": "3307", "username": "u", "password": "p@ss)/w:rd?x=y", "database": "d"}, true},
		{"mysql", "nothing to connect to", map[string]string{"dsn_string": ""}, false},
		{"mysql", "bad host", map[string]string{"dsn_string": "", "host": "h)/x", "database": "d"}, false},
		{"mysql", "bad port", map[string]string{"dsn_string": "", "host": "h", "port": "0", "database": "d"}, false},
		{"mysql", "max connections", map[string]string{"max_open_connections": "-1"}, false},
	}
	for _, bad := range badTables {
		cases = append(cases, kindCase{"mysql", "table " + bad, map[string]string{"table": bad}, false})
	}
	runKindCases(t, cases)
}

func TestAMQPSettings(t *testing.T) {
	runKindCases(t, []kindCase{
		{"amqp", "amqps", map[string]string{"url": "amqps://u:p@broker.example/vhost"}, true},
		{"amqp", "default exchange", map[string]string{"exchange": "", "routing_key": "queue"}, true},
		{"amqp", "default exchange without key", map[string]string{"exchange": "", "routing_key": ""}, false},
		{"amqp", "http url", map[string]string{"url": "http://u:" + hostileSecret + "@h/"}, false},
		{"amqp", "not a url", map[string]string{"url": "::" + hostileSecret}, false},
		{"amqp", "bad port", map[string]string{"url": "amqp://u:" + hostileSecret + "@h:99999/"}, false},
		{"amqp", "no host is localhost", map[string]string{"url": "amqp://u:p@:5672/"}, true},
		{"amqp", "bad host", map[string]string{"url": "amqp://u:" + hostileSecret + "@h%20x:5672/"}, false},
		{"amqp", "exchange with space", map[string]string{"exchange": "a b"}, false},
		{"amqp", "broker's exchange", map[string]string{"exchange": "amq.topic"}, false},
		{"amqp", "long exchange", map[string]string{"exchange": strings.Repeat("e", 256)}, false},
		{"amqp", "long routing key", map[string]string{"routing_key": strings.Repeat("r", 256)}, false},
		{"amqp", "topic", map[string]string{"exchange_type": "topic"}, true},
		{"amqp", "plugin type", map[string]string{"exchange_type": "x-consistent-hash"}, true},
		{"amqp", "bad type", map[string]string{"exchange_type": "direct; drop"}, false},
		{"amqp", "delivery mode 3", map[string]string{"delivery_mode": "3"}, false},
		{"amqp", "mandatory yes", map[string]string{"mandatory": "yes"}, true},
		{"amqp", "mandatory garbage", map[string]string{"mandatory": "perhaps"}, false},
		{"amqp", "confirms off", map[string]string{"publisher_confirms": "off"}, false},
		{"amqp", "internal", map[string]string{"internal": "on"}, false},
	})
}

func TestMQTTSettings(t *testing.T) {
	runKindCases(t, []kindCase{
		{"mqtt", "ssl", map[string]string{"broker": "ssl://broker.example:8883"}, true},
		{"mqtt", "default port", map[string]string{"broker": "tcp://broker.example"}, true},
		{"mqtt", "wss with path", map[string]string{"broker": "wss://broker.example/mqtt"}, true},
		{"mqtt", "no scheme", map[string]string{"broker": "127.0.0.1:1883"}, false},
		{"mqtt", "http", map[string]string{"broker": "http://h:1883"}, false},
		{"mqtt", "password in url", map[string]string{"broker": "tcp://u:" + hostileSecret + "@h:1883"}, false},
		{"mqtt", "query", map[string]string{"broker": "tcp://h:1883?x=1"}, false},
		{"mqtt", "tcp with path", map[string]string{"broker": "tcp://h:1883/x"}, false},
		{"mqtt", "bad port", map[string]string{"broker": "tcp://h:0"}, false},
		{"mqtt", "wildcard topic", map[string]string{"topic": "a/#"}, false},
		{"mqtt", "plus topic", map[string]string{"topic": "a/+/b"}, false},
		{"mqtt", "qos 0", map[string]string{"qos": "0"}, false},
		{"mqtt", "qos 2", map[string]string{"qos": "2"}, true},
		{"mqtt", "qos 3", map[string]string{"qos": "3"}, false},
		{"mqtt", "keep alive", map[string]string{"keep_alive_interval": "30s"}, true},
		{"mqtt", "keep alive zero", map[string]string{"keep_alive_interval": "0s"}, false},
		{"mqtt", "keep alive junk", map[string]string{"keep_alive_interval": "soon"}, false},
		{"mqtt", "reconnect interval", map[string]string{"reconnect_interval": "5s"}, true},
	})
}

func TestKafkaSettings(t *testing.T) {
	runKindCases(t, []kindCase{
		{"kafka", "several brokers", map[string]string{"brokers": "a:9092, b:9093,c"}, true},
		{"kafka", "no brokers", map[string]string{"brokers": " , ,"}, false},
		{"kafka", "url broker", map[string]string{"brokers": "kafka://u:" + hostileSecret + "@h:9092"}, false},
		{"kafka", "bad port", map[string]string{"brokers": "h:65536"}, false},
		{"kafka", "too many brokers", map[string]string{"brokers": strings.Repeat("h:1,", 65)}, false},
		{"kafka", "topic with slash", map[string]string{"topic": "a/b"}, false},
		{"kafka", "topic dot", map[string]string{"topic": "."}, false},
		{"kafka", "long topic", map[string]string{"topic": strings.Repeat("t", 250)}, false},
		{"kafka", "scram", map[string]string{"sasl_mechanism": "SHA512"}, true},
		{"kafka", "unknown mechanism", map[string]string{"sasl_mechanism": "gssapi"}, false},
		{"kafka", "sasl without user", map[string]string{"sasl_username": ""}, false},
		{"kafka", "sasl garbage", map[string]string{"sasl": "sometimes"}, false},
		{"kafka", "tls", map[string]string{"tls": "on", "tls_skip_verify": "on"}, true},
		{"kafka", "client cert missing", map[string]string{"client_tls_cert": "/nonexistent.pem", "client_tls_key": "/nonexistent.key"}, false},
		{"kafka", "codec", map[string]string{"compression_codec": "lz4"}, true},
		{"kafka", "bad codec", map[string]string{"compression_codec": "brotli"}, false},
		{"kafka", "level", map[string]string{"compression_codec": "gzip", "compression_level": "9"}, true},
		{"kafka", "bad level", map[string]string{"compression_level": "99"}, false},
		{"kafka", "batch size", map[string]string{"batch_size": "100", "batch_commit_timeout": "1s", "tls_client_auth": "0"}, true},
		{"kafka", "bad batch size", map[string]string{"batch_size": "-3"}, false},
		{"kafka", "linger default", map[string]string{"linger": ""}, true},
		{"kafka", "linger off", map[string]string{"linger": "0"}, true},
		{"kafka", "linger 20ms", map[string]string{"linger": "20ms"}, true},
		{"kafka", "linger 1s", map[string]string{"linger": "1s"}, true},
		{"kafka", "linger negative", map[string]string{"linger": "-1ms"}, false},
		{"kafka", "linger over a second", map[string]string{"linger": "1001ms"}, false},
		{"kafka", "linger in seconds over the bound", map[string]string{"linger": "5"}, false},
		{"kafka", "linger not a duration", map[string]string{"linger": "soon"}, false},
		{"kafka", "linger overflow", map[string]string{"linger": "9999999999999999999h"}, false},
	})
}
