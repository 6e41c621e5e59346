package targettest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardstore/shardstore/internal/testinstall"
)

// Server is a real server of one target kind, started for a test on
// loopback ports with a temporary data directory, and stopped when the
// test ends. Stop and Start (of the embedded Process) restart it with
// its data.
type Server struct {
	*Process
	// Settings are a target's settings for this server (with the test
	// user's credentials); clone before changing.
	Settings map[string]string
	// URL is how a test's own client reaches it, credentials included
	// (nats://, redis host:port, postgres://, a MySQL DSN, amqp://,
	// tcp:// of MQTT, Kafka's plain listener).
	URL string
	// User and Password are the test user's.
	User, Password string
	// Kafka only: a listener without SASL (for the test's reader) and a
	// TLS listener (a certificate of TLS's CA).
	PlainAddr, TLSAddr string
	TLS                TLSFiles
}

func (s *Server) start(t testing.TB) *Server {
	s.Process.Run(t)
	return s
}

// StartNATS runs Debian's nats-server with JetStream (file store) and a
// user and password.
func StartNATS(t testing.TB) *Server {
	t.Helper()
	bin := Find(t, Program{Name: "nats-server", Paths: []string{"nats-server", "/usr/sbin/nats-server"},
		Apt: []string{"nats-server"}, Require: "SHARDSTORE_REQUIRE_NATS"})
	port := FreePort(t)
	s := &Server{User: "shard", Password: "nats-Secret-pw"}
	s.Process = &Process{Name: "nats-server", Addr: fmt.Sprintf("127.0.0.1:%d", port),
		Args: []string{bin, "-a", "127.0.0.1", "-p", fmt.Sprint(port), "-js", "-sd", t.TempDir(),
			"--user", s.User, "--pass", s.Password}}
	s.URL = fmt.Sprintf("nats://%s:%s@%s", s.User, s.Password, s.Addr)
	s.Settings = map[string]string{"address": s.Addr, "username": s.User, "password": s.Password}
	return s.start(t)
}

// StartRedis runs Debian's redis-server with a password, append-only
// with an fsync per write (what was written survives a restart).
func StartRedis(t testing.TB) *Server {
	t.Helper()
	bin := Find(t, Program{Name: "redis-server", Paths: []string{"redis-server", "/usr/bin/redis-server"},
		Apt: []string{"redis-server"}, Require: "SHARDSTORE_REQUIRE_REDIS"})
	port := FreePort(t)
	dir := t.TempDir()
	s := &Server{Password: "redis-Secret-pw"}
	s.Process = &Process{Name: "redis-server", Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir,
		Args: []string{bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--requirepass", s.Password,
			"--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", dir}}
	s.URL = s.Addr
	s.Settings = map[string]string{"address": s.Addr, "password": s.Password}
	return s.start(t)
}

// StartPostgreSQL runs Debian's PostgreSQL: a cluster made by initdb
// (scram-sha-256, user shard), as the postgres user when the tests run
// as root.
func StartPostgreSQL(t testing.TB) *Server {
	t.Helper()
	bin := Find(t, Program{Name: "postgres", Paths: []string{"/usr/lib/postgresql/*/bin/postgres"},
		Apt: []string{"postgresql"}, Require: "SHARDSTORE_REQUIRE_POSTGRES"})
	s := &Server{User: "shard", Password: "pg-Secret-pw"}
	cred, chown := Unprivileged(t, "postgres")
	dir := TempDir(t)
	data := filepath.Join(dir, "data")
	if err := os.WriteFile(filepath.Join(dir, "pw"), []byte(s.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	chown(dir)
	RunCommand(t, cred, dir, filepath.Join(filepath.Dir(bin), "initdb"), "-D", data, "-U", s.User,
		"--auth=scram-sha-256", "--pwfile", filepath.Join(dir, "pw"), "--no-sync")
	port := FreePort(t)
	s.Process = &Process{Name: "postgres", StopSignal: syscall.SIGINT, Addr: fmt.Sprintf("127.0.0.1:%d", port), Credential: cred, Dir: dir,
		Args: []string{bin, "-D", data, "-h", "127.0.0.1", "-p", fmt.Sprint(port), "-k", dir,
			"-c", "fsync=off", "-c", "shared_buffers=16MB", "-c", "max_connections=40"}}
	s.URL = fmt.Sprintf("postgres://%s:%s@%s/postgres?sslmode=disable", s.User, s.Password, s.Addr)
	s.Ready = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, s.URL)
		if err != nil {
			return err
		}
		return c.Close(ctx)
	}
	s.Settings = map[string]string{"connection_string": s.URL}
	return s.start(t)
}

// StartMariaDB runs Debian's MariaDB: a data directory made by
// mariadb-install-db, a password user shard@127.0.0.1 with every grant
// and a database "events" (made by --init-file on each start).
func StartMariaDB(t testing.TB) *Server {
	t.Helper()
	bin := Find(t, Program{Name: "mariadbd", Paths: []string{"mariadbd", "/usr/sbin/mariadbd", "mysqld", "/usr/sbin/mysqld"},
		Apt: []string{"mariadb-server"}, Require: "SHARDSTORE_REQUIRE_MYSQL"})
	installDB := Find(t, Program{Name: "mariadb-install-db", Paths: []string{"mariadb-install-db", "/usr/bin/mariadb-install-db"},
		Apt: []string{"mariadb-server"}, Require: "SHARDSTORE_REQUIRE_MYSQL"})
	s := &Server{User: "shard", Password: "my-Secret-pw"}
	cred, chown := Unprivileged(t, "mysql")
	dir := TempDir(t)
	data := filepath.Join(dir, "data")
	initFile := filepath.Join(dir, "init.sql")
	if err := os.WriteFile(initFile, []byte(fmt.Sprintf(
		"CREATE USER IF NOT EXISTS '%s'@'127.0.0.1' IDENTIFIED BY '%s';\n"+
			"GRANT ALL ON *.* TO '%s'@'127.0.0.1';\nCREATE DATABASE IF NOT EXISTS events;\n", s.User, s.Password, s.User)), 0o600); err != nil {
		t.Fatal(err)
	}
	chown(dir)
	user := "root"
	if cred != nil {
		user = "mysql"
	}
	RunCommand(t, nil, dir, installDB, "--no-defaults", "--datadir="+data, "--user="+user,
		"--auth-root-authentication-method=socket", "--skip-test-db")
	port := FreePort(t)
	s.Process = &Process{Name: "mariadbd", Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir,
		Args: []string{bin, "--no-defaults", "--datadir=" + data, "--user=" + user, "--port=" + fmt.Sprint(port),
			"--bind-address=127.0.0.1", "--socket=" + filepath.Join(dir, "sock"), "--pid-file=" + filepath.Join(dir, "pid"),
			"--init-file=" + initFile, "--skip-name-resolve", "--innodb-buffer-pool-size=16M",
			"--innodb-flush-log-at-trx-commit=2", "--skip-log-bin"}}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = s.User, s.Password, "tcp", s.Addr, "events"
	s.URL = cfg.FormatDSN()
	s.Ready = func() error {
		db, err := sql.Open("mysql", s.URL)
		if err != nil {
			return err
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return db.PingContext(ctx)
	}
	s.Settings = map[string]string{"dsn_string": s.URL}
	return s.start(t)
}

// StartRabbitMQ runs Debian's RabbitMQ with its own node name, ports,
// epmd and data directory, and a user from rabbitmq.conf; the epmd the
// broker starts is stopped when the test ends.
func StartRabbitMQ(t testing.TB) *Server {
	t.Helper()
	bin := Find(t, Program{Name: "rabbitmq-server", Paths: []string{"/usr/lib/rabbitmq/bin/rabbitmq-server", "rabbitmq-server"},
		Apt: []string{"rabbitmq-server"}, Require: "SHARDSTORE_REQUIRE_RABBITMQ"})
	s := &Server{User: "shard", Password: "amqp-Secret-pw"}
	dir := t.TempDir()
	port, dist, epmd := FreePort(t), FreePort(t), FreePort(t)
	conf := filepath.Join(dir, "rabbitmq.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(
		"listeners.tcp.default = 127.0.0.1:%d\ndefault_user = %s\ndefault_pass = %s\nloopback_users = none\n",
		port, s.User, s.Password)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "enabled_plugins"), []byte("[].\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"HOME=" + dir, "RABBITMQ_NODENAME=shardtest@localhost", "RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT=" + fmt.Sprint(port), "RABBITMQ_DIST_PORT=" + fmt.Sprint(dist), "ERL_EPMD_PORT=" + fmt.Sprint(epmd),
		"RABBITMQ_CONFIG_FILE=" + conf, "RABBITMQ_ENABLED_PLUGINS_FILE=" + filepath.Join(dir, "enabled_plugins"),
		"RABBITMQ_MNESIA_BASE=" + filepath.Join(dir, "mnesia"), "RABBITMQ_LOG_BASE=" + filepath.Join(dir, "log"),
		"RABBITMQ_LOGS=-", "RABBITMQ_PID_FILE=" + filepath.Join(dir, "pid"),
		"RABBITMQ_ADVANCED_CONFIG_FILE=" + filepath.Join(dir, "advanced.config"),
	}
	s.URL = fmt.Sprintf("amqp://%s:%s@127.0.0.1:%d/", s.User, s.Password, port)
	s.Process = &Process{Name: "rabbitmq-server", Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir, Env: env,
		Args: []string{bin}, StartTimeout: 120 * time.Second,
		Ready: func() error {
			c, err := amqp.Dial(s.URL)
			if err != nil {
				return err
			}
			return c.Close()
		}}
	s.Settings = map[string]string{"url": s.URL}
	s.Process.Start(t)
	t.Cleanup(func() {
		s.Process.Stop(t)
		if epmdBin, err := exec.LookPath("epmd"); err == nil {
			_ = exec.Command(epmdBin, "-port", fmt.Sprint(epmd), "-kill").Run()
		}
	})
	return s
}

// StartMosquitto runs Debian's Mosquitto with a password file.
func StartMosquitto(t testing.TB) *Server {
	t.Helper()
	bin := Find(t, Program{Name: "mosquitto", Paths: []string{"mosquitto", "/usr/sbin/mosquitto"},
		Apt: []string{"mosquitto"}, Require: "SHARDSTORE_REQUIRE_MOSQUITTO"})
	passwd := Find(t, Program{Name: "mosquitto_passwd", Paths: []string{"mosquitto_passwd", "/usr/bin/mosquitto_passwd"},
		Apt: []string{"mosquitto"}, Require: "SHARDSTORE_REQUIRE_MOSQUITTO"})
	s := &Server{User: "shard", Password: "mqtt-Secret-pw"}
	dir := TempDir(t)
	pwfile := filepath.Join(dir, "passwd")
	RunCommand(t, nil, dir, passwd, "-c", "-b", pwfile, s.User, s.Password)
	_ = os.Chmod(pwfile, 0o644) // mosquitto drops root for its own user
	port := FreePort(t)
	conf := filepath.Join(dir, "mosquitto.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous false\npassword_file %s\npersistence false\n", port, pwfile)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Process = &Process{Name: "mosquitto", Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir, Args: []string{bin, "-c", conf}}
	s.URL = "tcp://" + s.Addr
	s.Settings = map[string]string{"broker": s.URL, "username": s.User, "password": s.Password}
	return s.start(t)
}

// KafkaVersion is the Apache Kafka release StartKafka runs, from Maven
// Central's org.apache.kafka:kafka_2.13 and its dependencies.
const KafkaVersion = "4.1.1"

var kafkaJars testinstall.Once[string]

// kafkaLibs returns a folder of Kafka's jars: SHARDSTORE_KAFKA_LIBS, or
// the user cache, filled on first use by mvn dependency:copy-dependencies
// (Debian's maven installed when mvn is missing).
func kafkaLibs(t testing.TB) string {
	t.Helper()
	return kafkaJars.Get(t, testinstall.Need{What: "Kafka jars folder", Require: "SHARDSTORE_REQUIRE_KAFKA"}, findKafkaJars)
}

func findKafkaJars() (string, []string, error) {
	var log []string
	if d := os.Getenv("SHARDSTORE_KAFKA_LIBS"); d != "" {
		return d, append(log, "using SHARDSTORE_KAFKA_LIBS: "+d), nil
	}
	base, err := testinstall.CacheDir("kafka-" + KafkaVersion)
	if err != nil {
		return "", log, err
	}
	libs := filepath.Join(base, "libs")
	jar := filepath.Join(libs, "kafka_2.13-"+KafkaVersion+".jar")
	if _, err := os.Stat(jar); err == nil {
		return libs, append(log, "using Kafka "+KafkaVersion+" jars in "+libs), nil
	}
	mvn, mlog, err := testinstall.FindOrInstall(Program{Name: "mvn", Paths: []string{"mvn"}, Apt: []string{"maven"}, Tests: "fetching Kafka's jars"})
	log = append(log, mlog...)
	if err != nil {
		return "", log, err
	}
	err = testinstall.Locked("kafka-"+KafkaVersion, func() error {
		if _, err := os.Stat(jar); err == nil {
			return nil // another test binary fetched them meanwhile
		}
		if err := os.MkdirAll(base, 0o755); err != nil {
			return err
		}
		pom := `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>shardstore.test</groupId><artifactId>kafka-broker</artifactId><version>1</version>
<dependencies><dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>` + KafkaVersion + `</version></dependency>
<dependency><groupId>org.slf4j</groupId><artifactId>slf4j-nop</artifactId><version>1.7.36</version></dependency></dependencies></project>
`
		if err := os.WriteFile(filepath.Join(base, "pom.xml"), []byte(pom), 0o644); err != nil {
			return err
		}
		log = append(log, "fetching org.apache.kafka:kafka_2.13:"+KafkaVersion+" and its dependencies from Maven Central with mvn into "+libs)
		cmd := exec.Command(mvn, "-q", "-B", "dependency:copy-dependencies", "-DoutputDirectory="+libs, "-DincludeScope=runtime")
		cmd.Dir = base
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("mvn dependency:copy-dependencies: %w: %s", err, testinstall.Tail(out))
		}
		return nil
	})
	if err != nil {
		return "", log, err
	}
	return libs, log, nil
}

// StartKafka runs Apache Kafka in KRaft mode (one JVM, broker and
// controller) with three listeners: SASL_PLAINTEXT (Addr: PLAIN, and
// SCRAM-SHA-256/512 users made at format time), PLAINTEXT (PlainAddr,
// for a test's reader) and SSL (TLSAddr, a certificate of TLS's CA).
// Java comes from PATH (Debian's openjdk-17-jre-headless when missing).
func StartKafka(t testing.TB) *Server {
	t.Helper()
	java := Find(t, Program{Name: "java", Paths: []string{"java", "/usr/bin/java"},
		Apt: []string{"openjdk-17-jre-headless"}, Require: "SHARDSTORE_REQUIRE_KAFKA"})
	libs := kafkaLibs(t)
	s := &Server{User: "shard", Password: "kafka-Secret-pw"}
	dir := t.TempDir()
	plainPort, saslPort, ctlPort, sslPort := FreePort(t), FreePort(t), FreePort(t), FreePort(t)
	s.TLS = NewTLSFiles(t, dir)
	keystore := filepath.Join(dir, "keystore.pem")
	key, _ := os.ReadFile(s.TLS.Key)
	cert, _ := os.ReadFile(s.TLS.Cert)
	if err := os.WriteFile(keystore, append(key, cert...), 0o600); err != nil {
		t.Fatal(err)
	}
	jaasPlain := fmt.Sprintf(`org.apache.kafka.common.security.plain.PlainLoginModule required username="%s" password="%s" user_%s="%s";`,
		s.User, s.Password, s.User, s.Password)
	jaasScram := `org.apache.kafka.common.security.scram.ScramLoginModule required;`
	props := strings.Join([]string{
		"process.roles=broker,controller", "node.id=1",
		fmt.Sprintf("controller.quorum.voters=1@127.0.0.1:%d", ctlPort),
		fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,SASL_PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d,SSL://127.0.0.1:%d", plainPort, saslPort, ctlPort, sslPort),
		fmt.Sprintf("advertised.listeners=PLAINTEXT://127.0.0.1:%d,SASL_PLAINTEXT://127.0.0.1:%d,SSL://127.0.0.1:%d", plainPort, saslPort, sslPort),
		"listener.name.ssl.ssl.keystore.type=PEM", "listener.name.ssl.ssl.keystore.location=" + keystore,
		"controller.listener.names=CONTROLLER", "inter.broker.listener.name=PLAINTEXT",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT,SSL:SSL",
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config=" + jaasPlain,
		"listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=" + jaasScram,
		"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=" + jaasScram,
		"log.dirs=" + filepath.Join(dir, "data"),
		"num.partitions=1", "offsets.topic.replication.factor=1", "transaction.state.log.replication.factor=1",
		"transaction.state.log.min.isr=1", "group.initial.rebalance.delay.ms=0", "auto.create.topics.enable=true",
	}, "\n") + "\n"
	conf := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(conf, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	jvm := []string{java, "-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", filepath.Join(libs, "*")}
	RunCommand(t, nil, dir, append(jvm, "kafka.tools.StorageTool", "format", "-t", "c2hhcmRzdG9yZXRlc3QxMg", "-c", conf,
		"--add-scram", fmt.Sprintf("SCRAM-SHA-256=[name=%s,password=%s]", s.User, s.Password),
		"--add-scram", fmt.Sprintf("SCRAM-SHA-512=[name=%s,password=%s]", s.User, s.Password))...)
	s.PlainAddr = fmt.Sprintf("127.0.0.1:%d", plainPort)
	s.TLSAddr = fmt.Sprintf("127.0.0.1:%d", sslPort)
	s.URL = s.PlainAddr
	s.Process = &Process{Name: "kafka", Addr: fmt.Sprintf("127.0.0.1:%d", saslPort), Dir: dir,
		Args: append(jvm, "kafka.Kafka", conf), StartTimeout: 120 * time.Second,
		Ready: func() error {
			c, err := kgo.NewClient(kgo.SeedBrokers(s.PlainAddr))
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			return c.Ping(ctx)
		}}
	s.Settings = map[string]string{"brokers": s.Addr, "sasl": "on", "sasl_username": s.User, "sasl_password": s.Password, "sasl_mechanism": "plain"}
	return s.start(t)
}
