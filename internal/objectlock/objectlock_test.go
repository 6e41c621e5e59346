package objectlock

import (
	"errors"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	ns := `xmlns="http://s3.amazonaws.com/doc/2006-03-01/"`
	for _, tc := range []struct {
		doc  string
		want Config
		code string // expected error code; "" = valid
	}{
		{`<ObjectLockConfiguration ` + ns + `><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>`, Config{}, ""},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>3</Days></DefaultRetention></Rule></ObjectLockConfiguration>`,
			Config{DefaultMode: Governance, Days: 3}, ""},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Years>2</Years></DefaultRetention></Rule></ObjectLockConfiguration>`,
			Config{DefaultMode: Compliance, Years: 2}, ""},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Disabled</ObjectLockEnabled></ObjectLockConfiguration>`, Config{}, "MalformedXML"},
		{`<ObjectLockConfiguration/>`, Config{}, "MalformedXML"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule/></ObjectLockConfiguration>`, Config{}, "MalformedXML"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days><Years>1</Years></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "MalformedXML"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "MalformedXML"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>FOREVER</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "MalformedXML"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>0</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "InvalidArgument"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Years>-1</Years></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "InvalidArgument"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled`, Config{}, "MalformedXML"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>-1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "InvalidArgument"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>-0</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "InvalidArgument"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Years>0</Years></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "InvalidArgument"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>36500</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{DefaultMode: Governance, Days: 36500}, ""},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>36501</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "InvalidArgument"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Years>100</Years></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{DefaultMode: Governance, Years: 100}, ""},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Years>101</Years></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "InvalidArgument"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>-9223372036854775808</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "InvalidArgument"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>99999999999999999999</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "MalformedXML"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1.5</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "MalformedXML"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>0x10</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "MalformedXML"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days></Days></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "InvalidArgument"},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days> 7 </Days></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{DefaultMode: Governance, Days: 7}, ""},
		{`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Years>1</Years><Days>0</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, Config{}, "MalformedXML"},
	} {
		got, err := Parse([]byte(tc.doc))
		var le *Error
		switch {
		case tc.code == "" && err != nil:
			t.Errorf("%s: %v", tc.doc, err)
		case tc.code != "" && (!errors.As(err, &le) || le.Code != tc.code):
			t.Errorf("%s: error %v, want %s", tc.doc, err, tc.code)
		case tc.code == "" && got != tc.want:
			t.Errorf("%s: %+v, want %+v", tc.doc, got, tc.want)
		}
		if tc.code == "" {
			// The canonical form parses back to the same configuration.
			back, err := ParseStored(got.Marshal(""))
			if err != nil || back != got {
				t.Errorf("round trip of %+v: %+v %v", got, back, err)
			}
		}
	}
}

func TestDefaultRetention(t *testing.T) {
	at := time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC)
	if got := (Config{DefaultMode: Governance, Days: 3}).Default(at); got.Mode != Governance || !got.RetainUntil.Equal(at.AddDate(0, 0, 3)) {
		t.Fatalf("days: %+v", got)
	}
	// Years are calendar years.
	if got := (Config{DefaultMode: Compliance, Years: 1}).Default(at); !got.RetainUntil.Equal(time.Date(2029, 3, 1, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("years: %+v", got)
	}
	if got := (Config{}).Default(at); got != (Lock{}) {
		t.Fatalf("no rule: %+v", got)
	}
}

func TestCheckRemove(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Hour), now.Add(-time.Hour)
	for _, tc := range []struct {
		lock   Lock
		bypass bool
		ok     bool
	}{
		{Lock{}, false, true},
		{Lock{LegalHold: HoldOff}, false, true},
		{Lock{LegalHold: HoldOn}, true, false},
		{Lock{Mode: Compliance, RetainUntil: later}, true, false},
		{Lock{Mode: Compliance, RetainUntil: earlier}, false, true},
		{Lock{Mode: Governance, RetainUntil: later}, false, false},
		{Lock{Mode: Governance, RetainUntil: later}, true, true},
		{Lock{Mode: Governance, RetainUntil: later, LegalHold: HoldOn}, true, false},
		{Lock{Mode: Compliance, RetainUntil: now}, false, true}, // the date itself has passed
	} {
		err := tc.lock.CheckRemove(now, tc.bypass)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrLocked)) {
			t.Errorf("%+v bypass=%v: %v, want ok=%v", tc.lock, tc.bypass, err, tc.ok)
		}
	}
}

func TestCheckChange(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	d := func(n int) time.Time { return now.AddDate(0, 0, n) }
	comp, gov := Lock{Mode: Compliance, RetainUntil: d(5)}, Lock{Mode: Governance, RetainUntil: d(5)}
	for _, tc := range []struct {
		name      string
		old, next Lock
		bypass    bool
		ok        bool
	}{
		{"extend compliance", comp, Lock{Mode: Compliance, RetainUntil: d(6)}, false, true},
		{"same compliance", comp, comp, false, true},
		{"shorten compliance", comp, Lock{Mode: Compliance, RetainUntil: d(4)}, true, false},
		{"remove compliance", comp, Lock{}, true, false},
		{"compliance to governance", comp, Lock{Mode: Governance, RetainUntil: d(9)}, true, false},
		{"expired compliance", Lock{Mode: Compliance, RetainUntil: d(-1)}, Lock{}, false, true},
		{"extend governance", gov, Lock{Mode: Governance, RetainUntil: d(6)}, false, true},
		{"governance to compliance", gov, Lock{Mode: Compliance, RetainUntil: d(5)}, false, false},
		{"governance to longer compliance", gov, Lock{Mode: Compliance, RetainUntil: d(9)}, false, false},
		{"governance to compliance, bypass", gov, Lock{Mode: Compliance, RetainUntil: d(5)}, true, true},
		{"expired governance to compliance", Lock{Mode: Governance, RetainUntil: d(-1)}, Lock{Mode: Compliance, RetainUntil: d(1)}, false, true},
		{"shorten governance", gov, Lock{Mode: Governance, RetainUntil: d(1)}, false, false},
		{"shorten governance, bypass", gov, Lock{Mode: Governance, RetainUntil: d(1)}, true, true},
		{"remove governance", gov, Lock{}, false, false},
		{"remove governance, bypass", gov, Lock{}, true, true},
		{"new retention", Lock{}, Lock{Mode: Compliance, RetainUntil: d(1)}, false, true},
	} {
		err := CheckChange(tc.old, tc.next, now, tc.bypass)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	var le *Error
	if err := CheckChange(Lock{}, Lock{Mode: "X", RetainUntil: d(1)}, now, false); !errors.As(err, &le) || le.Code != "InvalidArgument" {
		t.Errorf("unknown mode: %v", err)
	}
}

func TestRetainUntilDates(t *testing.T) {
	for _, s := range []string{"2030-01-02T03:04:05Z", "2030-01-02T03:04:05.000Z", "2030-01-02T04:04:05+01:00"} {
		got, err := ParseRetainUntil(s)
		if err != nil || !got.Equal(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) {
			t.Errorf("%s: %v %v", s, got, err)
		}
	}
	if _, err := ParseRetainUntil("tomorrow"); err == nil {
		t.Error("bad date accepted")
	}
	if got := FormatRetainUntil(time.Date(2030, 1, 2, 3, 4, 5, 600e6, time.UTC)); got != "2030-01-02T03:04:05.600Z" {
		t.Errorf("format: %s", got)
	}
}
