package notifytarget_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardstore/shardstore/internal/notifytarget"
	"github.com/shardstore/shardstore/internal/notifytarget/targettest"
)

// kafkaVersion is the Apache Kafka release the tests run, from Maven
// Central's org.apache.kafka:kafka_2.13 and its dependencies.
const kafkaVersion = "4.1.1"

const kafkaPassword = "kafka-Secret-pw"

var kafkaJars struct {
	once sync.Once
	dir  string
	log  []string
	err  error
}

// kafkaLibs returns a directory of Kafka's jars: SHARDSTORE_KAFKA_LIBS,
// or the user cache, filled on first use by Maven (mvn
// dependency:copy-dependencies of kafka_2.13, installing Debian's maven
// when mvn is missing). Java 17+ must be on PATH (Debian's
// openjdk-17-jre-headless is installed when it is not). Without them the
// test is skipped, or fails with SHARDSTORE_REQUIRE_KAFKA set.
func kafkaLibs(t *testing.T) (java, libs string) {
	java = targettest.Find(t, targettest.Program{
		Name: "java", Paths: []string{"java", "/usr/bin/java"},
		Apt: []string{"openjdk-17-jre-headless"}, Require: "SHARDSTORE_REQUIRE_KAFKA",
	})
	kafkaJars.once.Do(func() { kafkaJars.dir, kafkaJars.log, kafkaJars.err = findKafkaJars(t) })
	for _, l := range kafkaJars.log {
		t.Log(l)
	}
	if kafkaJars.err != nil {
		if os.Getenv("SHARDSTORE_REQUIRE_KAFKA") != "" {
			t.Fatalf("SHARDSTORE_REQUIRE_KAFKA is set and there are no Kafka jars: %v", kafkaJars.err)
		}
		t.Skipf("skipping: no Kafka jars and fetching them failed (%v); set SHARDSTORE_REQUIRE_KAFKA=1 to make this a failure", kafkaJars.err)
	}
	return java, kafkaJars.dir
}

func findKafkaJars(t *testing.T) (string, []string, error) {
	var log []string
	if d := os.Getenv("SHARDSTORE_KAFKA_LIBS"); d != "" {
		return d, append(log, "using SHARDSTORE_KAFKA_LIBS: "+d), nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", log, err
	}
	base := filepath.Join(cache, "shardstore-test", "kafka-"+kafkaVersion)
	libs := filepath.Join(base, "libs")
	if _, err := os.Stat(filepath.Join(libs, "kafka_2.13-"+kafkaVersion+".jar")); err == nil {
		return libs, append(log, "using Kafka "+kafkaVersion+" jars in "+libs), nil
	}
	mvn := targettest.Find(t, targettest.Program{Name: "mvn", Paths: []string{"mvn"}, Apt: []string{"maven"}, Require: "SHARDSTORE_REQUIRE_KAFKA"})
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", log, err
	}
	pom := `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>shardstore.test</groupId><artifactId>kafka-broker</artifactId><version>1</version>
<dependencies><dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>` + kafkaVersion + `</version></dependency>
<dependency><groupId>org.slf4j</groupId><artifactId>slf4j-nop</artifactId><version>1.7.36</version></dependency></dependencies></project>
`
	if err := os.WriteFile(filepath.Join(base, "pom.xml"), []byte(pom), 0o644); err != nil {
		return "", log, err
	}
	log = append(log, "fetching org.apache.kafka:kafka_2.13:"+kafkaVersion+" and its dependencies from Maven Central with mvn into "+libs)
	cmd := exec.Command(mvn, "-q", "-B", "dependency:copy-dependencies", "-DoutputDirectory="+libs, "-DincludeScope=runtime")
	cmd.Dir = base
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", log, fmt.Errorf("mvn dependency:copy-dependencies: %w: %s", err, lastBytes(out))
	}
	return libs, log, nil
}

func lastBytes(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// TestKafka runs the suite against a real Apache Kafka broker in KRaft
// mode (one process, broker and controller), started once, through a
// SASL_PLAINTEXT listener (PLAIN; SCRAM-SHA-256 and -512 users made at
// format time), read back by a franz-go consumer on a plain listener.
func TestKafka(t *testing.T) {
	java, libs := kafkaLibs(t)
	dir := t.TempDir()
	plainPort, saslPort, ctlPort, sslPort := targettest.FreePort(t), targettest.FreePort(t), targettest.FreePort(t), targettest.FreePort(t)
	files := targettest.NewTLSFiles(t, dir)
	keystore := filepath.Join(dir, "keystore.pem")
	key, _ := os.ReadFile(files.Key)
	cert, _ := os.ReadFile(files.Cert)
	if err := os.WriteFile(keystore, append(key, cert...), 0o600); err != nil {
		t.Fatal(err)
	}
	jaasPlain := fmt.Sprintf(`org.apache.kafka.common.security.plain.PlainLoginModule required username="shard" password="%s" user_shard="%s";`, kafkaPassword, kafkaPassword)
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
	cp := filepath.Join(libs, "*")
	jvm := []string{java, "-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", cp}
	targettest.RunCommand(t, nil, dir, append(jvm, "kafka.tools.StorageTool", "format", "-t", "c2hhcmRzdG9yZXRlc3QxMg", "-c", conf,
		"--add-scram", fmt.Sprintf("SCRAM-SHA-256=[name=shard,password=%s]", kafkaPassword),
		"--add-scram", fmt.Sprintf("SCRAM-SHA-512=[name=shard,password=%s]", kafkaPassword))...)
	srv := &targettest.Process{
		Name: "kafka", Addr: fmt.Sprintf("127.0.0.1:%d", saslPort), Dir: dir,
		Args: append(jvm, "kafka.Kafka", conf), StartTimeout: 120 * time.Second,
	}
	plainAddr := fmt.Sprintf("127.0.0.1:%d", plainPort)
	srv.Ready = func() error {
		c, err := kgo.NewClient(kgo.SeedBrokers(plainAddr))
		if err != nil {
			return err
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return c.Ping(ctx)
	}
	srv.Start(t)
	t.Cleanup(func() { srv.Stop(t) })

	// The reader: a consumer of the topic from its start, polled by Read.
	consumer, err := kgo.NewClient(kgo.SeedBrokers(plainAddr), kgo.ConsumeTopics("shardstore-events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(consumer.Close)
	var got []targettest.Received
	read := func(t *testing.T) []targettest.Received {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		fs := consumer.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { got = append(got, targettest.Received{Body: r.Value}) })
		return got
	}
	saslAddr := srv.Addr
	settings := map[string]string{"brokers": saslAddr, "topic": "shardstore-events", "sasl": "on",
		"sasl_username": "shard", "sasl_password": kafkaPassword, "sasl_mechanism": "plain"}
	targettest.Run(t, targettest.Config{
		New:   newTarget(notifytarget.Kafka(), "1", settings),
		Read:  read,
		Stop:  func(t *testing.T) { srv.Stop(t) },
		Start: func(t *testing.T) { srv.Start(t) },
	})
	for _, mech := range []string{"sha256", "sha512"} {
		t.Run("SCRAM-"+mech, func(t *testing.T) {
			s := clone(settings)
			s["sasl_mechanism"] = mech
			s["compression_codec"] = "zstd"
			tg := newTarget(notifytarget.Kafka(), "scram", s)(t)
			defer tg.Close()
			d := targettest.Delivery("s3:ObjectCreated:Put", "scram-"+mech, "k", 1, 1)
			if err := tg.Send(ctxFor(t, 30*time.Second), d); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the SCRAM record", func() error {
				for _, r := range read(t) {
					if string(r.Body) == string(d.Payload) {
						return nil
					}
				}
				return fmt.Errorf("not read yet")
			})
		})
	}
	// TLS: the target has no CA setting (MinIO's neither: the server's
	// trusted CAs), so the test CA is accepted with tls_skip_verify, and
	// without it the unknown CA is refused.
	sslAddr := fmt.Sprintf("127.0.0.1:%d", sslPort)
	t.Run("TLS", func(t *testing.T) {
		tg := newTarget(notifytarget.Kafka(), "tls", map[string]string{"brokers": sslAddr, "topic": "shardstore-events", "tls": "on", "tls_skip_verify": "on"})(t)
		defer tg.Close()
		d := targettest.Delivery("s3:ObjectCreated:Put", "tls", "k", 1, 1)
		if err := tg.Send(ctxFor(t, 30*time.Second), d); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the TLS record", func() error {
			for _, r := range read(t) {
				if string(r.Body) == string(d.Payload) {
					return nil
				}
			}
			return fmt.Errorf("not read yet")
		})
		untrusted := newTarget(notifytarget.Kafka(), "untrusted", map[string]string{"brokers": sslAddr, "topic": "shardstore-events", "tls": "on"})(t)
		defer untrusted.Close()
		if err := untrusted.Send(ctxFor(t, 3*time.Second), d); err == nil {
			t.Fatal("a broker whose certificate no trusted CA signed was accepted")
		}
	})
	t.Run("WrongPassword", func(t *testing.T) {
		s := clone(settings)
		s["sasl_password"] = "Wrong-Secret-123"
		tg := newTarget(notifytarget.Kafka(), "bad", s)(t)
		defer tg.Close()
		checkRefused(t, tg.Send(ctxFor(t, 3*time.Second), targettest.Delivery("s3:ObjectCreated:Put", "b", "k", 1, 1)), "Wrong-Secret-123")
	})
}
