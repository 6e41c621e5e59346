package notifytarget_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/notifytarget"
)

// FuzzKindSettings gives every field of every kind arbitrary values: New
// must not panic, must refuse with an ErrSetting or accept, and its error
// must never carry a secret field's value.
func FuzzKindSettings(f *testing.F) {
	f.Add(0, 0, "127.0.0.1:1", "x")
	f.Add(1, 2, "redis://:pw@h", "namespace")
	f.Add(2, 0, "host='h password=Secret", "t; DROP TABLE x")
	f.Add(3, 0, "u:Secret@tcp(h:1)/d?interpolateParams=true", "`t`")
	f.Add(4, 0, "amqp://u:Secret@h:99999/", "amq.x")
	f.Add(5, 0, "tcp://u:Secret@h:1883/x?y", "a/#")
	f.Add(6, 0, "a:1,b,,c:99999", "t/../x")
	kinds := notifytarget.All()
	f.Fuzz(func(t *testing.T, ki, fi int, v1, v2 string) {
		if ki < 0 {
			ki = -ki
		}
		if fi < 0 {
			fi = -fi
		}
		k := kinds[ki%len(kinds)]
		m := clone(valid[k.Name])
		f1 := k.Fields[fi%len(k.Fields)]
		f2 := k.Fields[(fi+1)%len(k.Fields)]
		// A secret field's value carries a marker that no message has.
		const marker = "Qz7SecretMarker"
		if f1.Secret {
			v1 += marker
		}
		if f2.Secret {
			v2 = marker + v2
		}
		m[f1.Name], m[f2.Name] = v1, v2
		tg, err := k.New("fz", m)
		if err != nil {
			if !errors.Is(err, notifytarget.ErrSetting) {
				t.Fatalf("%s: error does not wrap ErrSetting: %v", k.Name, err)
			}
			if strings.Contains(err.Error(), marker) {
				t.Fatalf("%s: error echoes a secret: %v", k.Name, err)
			}
			return
		}
		if !strings.HasPrefix(tg.ARN(), "arn:minio:sqs::fz:") {
			t.Fatalf("ARN %q", tg.ARN())
		}
		if err := tg.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
