package notify

import (
	"strings"
	"testing"
)

var fileKinds = []Kind{
	{Name: "webhook", Fields: []Field{{Name: "endpoint", Required: true}, {Name: "auth_token", Secret: true}, {Name: "queue_limit"}}},
	{Name: "postgresql", Config: "postgres", Fields: []Field{{Name: "connection_string", Secret: true}, {Name: "table", Required: true}}},
}

// TestFromConfigFile: a MinIO `mc admin config export` as it is: the
// disabled defaults skipped, quoted values with spaces, audit targets,
// postgres by its configuration name, other subsystems ignored.
func TestFromConfigFile(t *testing.T) {
	export := `# exported
api requests_max=0 requests_deadline=10s
notify_webhook enable=off endpoint= auth_token= queue_limit=0
notify_webhook:primary endpoint="http://h.example/e" auth_token="Bearer-less token with spaces" queue_limit=10000 queue_dir=""
notify_webhook:off enable=off endpoint="http://off.example/"
notify_postgres:pg connection_string='host=db user=u password=p' table=events comment="ours"
audit_webhook:siem endpoint=http://siem.example/in
notify_nsq:1 nsqd_address=x:4150 topic=t
notify_webhook:empty endpoint="" auth_token=""
`
	specs, ignored, err := FromConfigFile([]byte(export), fileKinds)
	must(t, err)
	var got []string
	for _, s := range specs {
		got = append(got, TargetKey(s.ID, s.Kind, s.Audit)+" "+s.Settings["endpoint"]+s.Settings["table"]+"|"+s.Settings["auth_token"]+s.Settings["connection_string"])
	}
	want := "primary:webhook http://h.example/e|Bearer-less token with spaces,pg:postgresql events|host=db user=u password=p,audit:siem:webhook http://siem.example/in|"
	if strings.Join(got, ",") != want {
		t.Fatalf("specs\n%s\nwant\n%s", strings.Join(got, ","), want)
	}
	if strings.Join(ignored, ",") != `line 2: subsystem "api",line 4: setting "queue_dir" of webhook,line 6: setting "comment" of postgresql,line 8: kind "nsq"` {
		t.Fatalf("ignored %q", ignored)
	}
}

// TestFromConfigFileHostile: refused with the line named and no value
// echoed.
func TestFromConfigFileHostile(t *testing.T) {
	for _, bad := range []string{
		"notify_webhook:a/b endpoint=http://x/",
		"notify_webhook:" + strings.Repeat("x", 65) + " endpoint=http://x/",
		"notify_webhook:p endpoint=\"http://secret-x/",
		"notify_webhook:p endpoint=\"http://secret-x/\"junk",
		"notify_webhook:p endpoint=http://secret-x/ auth_token=\"a\x01b\"",
		"notify_webhook:p ENDPOINT=http://secret-x/",
		"notify_webhook:p endpoint",
		"notify_webhook:p =http://secret-x/",
		"notify_webhook:p auth_token=secret-x",
		"notify_webhook:p enable=maybe endpoint=http://secret-x/",
		"notify_webhook:p endpoint=http://secret-x/\nnotify_webhook:p endpoint=http://secret-y/",
		"notify_webhook:p endpoint=" + strings.Repeat("a", maxConfigLine),
		strings.Repeat("#", maxConfigFile+1),
	} {
		_, _, err := FromConfigFile([]byte(bad), fileKinds)
		if err == nil {
			t.Errorf("accepted %.80q", bad)
			continue
		}
		if strings.Contains(err.Error(), "secret-") {
			t.Errorf("error echoes a value: %v", err)
		}
	}
}

func FuzzFromConfigFile(f *testing.F) {
	f.Add([]byte("notify_webhook:primary endpoint=\"http://h/e\" auth_token='t t'\n# c\naudit_webhook x=y"))
	f.Fuzz(func(t *testing.T, data []byte) {
		specs, _, err := FromConfigFile(data, fileKinds)
		if err != nil {
			return
		}
		for _, s := range specs {
			if !validName(s.ID) && s.ID != DefaultID {
				t.Fatalf("accepted target ID %q", s.ID)
			}
			if s.Kind == "webhook" && s.Settings["endpoint"] == "" {
				t.Fatalf("enabled webhook without an endpoint: %+v", s)
			}
		}
	})
}
