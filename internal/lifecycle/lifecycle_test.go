package lifecycle

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func doc(rules ...string) string {
	return `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` + strings.Join(rules, "") + `</LifecycleConfiguration>`
}

func TestParseValidation(t *testing.T) {
	long := strings.Repeat("x", 256)
	var many []string
	for i := 0; i < MaxRules+1; i++ {
		many = append(many, `<Rule><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`)
	}
	cases := []struct {
		name, body, code, msg string
	}{
		{"ok days", doc(`<Rule><ID>a</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>3</Days></Expiration></Rule>`), "", ""},
		{"ok legacy prefix", doc(`<Rule><ID>a</ID><Prefix>logs/</Prefix><Status>Disabled</Status><Expiration><Days>3</Days></Expiration></Rule>`), "", ""},
		{"ok date", doc(`<Rule><Filter/><Status>Enabled</Status><Expiration><Date>2030-01-02T00:00:00.000Z</Date></Expiration></Rule>`), "", ""},
		{"ok date no zone", doc(`<Rule><Filter/><Status>Enabled</Status><Expiration><Date>2030-01-02T00:00:00</Date></Expiration></Rule>`), "", ""},
		{"ok and", doc(`<Rule><Filter><And><Prefix>a</Prefix><Tag><Key>k</Key><Value>v</Value></Tag><Tag><Key>k2</Key><Value>v</Value></Tag><ObjectSizeGreaterThan>1</ObjectSizeGreaterThan><ObjectSizeLessThan>10</ObjectSizeLessThan></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`), "", ""},
		{"ok all actions", doc(`<Rule><Filter><Prefix>x</Prefix></Filter><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration><NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays><NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration><AbortIncompleteMultipartUpload><DaysAfterInitiation>2</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`), "", ""},
		{"not xml", "<Lifecycle", "MalformedXML", ""},
		{"wrong root", `<Foo><Rule/></Foo>`, "MalformedXML", ""},
		{"no rules", doc(), "MalformedXML", ""},
		{"too many rules", doc(many...), "MalformedXML", ""},
		{"bad status", doc(`<Rule><Filter/><Status>enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`), "MalformedXML", ""},
		{"no filter no prefix", doc(`<Rule><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`), "MalformedXML", ""},
		{"filter and prefix", doc(`<Rule><Prefix/><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`), "MalformedXML", ""},
		{"two filter conditions", doc(`<Rule><Filter><Prefix>a</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`), "MalformedXML", ""},
		{"no action", doc(`<Rule><Filter/><Status>Enabled</Status></Rule>`), "InvalidRequest", "At least one action needs to be specified in a rule"},
		{"zero days", doc(`<Rule><Filter/><Status>Enabled</Status><Expiration><Days>0</Days></Expiration></Rule>`), "InvalidArgument", "'Days' for Expiration action must be a positive integer"},
		{"negative days", doc(`<Rule><Filter/><Status>Enabled</Status><Expiration><Days>-4</Days></Expiration></Rule>`), "InvalidArgument", "'Days' for Expiration action must be a positive integer"},
		{"days not a number", doc(`<Rule><Filter/><Status>Enabled</Status><Expiration><Days>x</Days></Expiration></Rule>`), "MalformedXML", ""},
		{"days and date", doc(`<Rule><Filter/><Status>Enabled</Status><Expiration><Days>1</Days><Date>2030-01-02T00:00:00Z</Date></Expiration></Rule>`), "MalformedXML", ""},
		{"empty expiration", doc(`<Rule><Filter/><Status>Enabled</Status><Expiration></Expiration></Rule>`), "MalformedXML", ""},
		{"marker and days", doc(`<Rule><Filter/><Status>Enabled</Status><Expiration><Days>1</Days><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule>`), "MalformedXML", ""},
		{"date not midnight", doc(`<Rule><Filter/><Status>Enabled</Status><Expiration><Date>2030-01-02T10:00:00Z</Date></Expiration></Rule>`), "InvalidArgument", "'Date' must be at midnight GMT"},
		{"date offset not midnight utc", doc(`<Rule><Filter/><Status>Enabled</Status><Expiration><Date>2030-01-02T00:00:00+02:00</Date></Expiration></Rule>`), "InvalidArgument", "'Date' must be at midnight GMT"},
		{"date garbage", doc(`<Rule><Filter/><Status>Enabled</Status><Expiration><Date>tomorrow</Date></Expiration></Rule>`), "InvalidArgument", "'Date' must be in ISO 8601 format"},
		{"long id", doc(`<Rule><ID>` + long + `</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`), "InvalidArgument", "ID length should not exceed allowed limit of 255"},
		{"duplicate id", doc(`<Rule><ID>a</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`, `<Rule><ID>a</ID><Filter/><Status>Enabled</Status><Expiration><Days>2</Days></Expiration></Rule>`), "InvalidArgument", "Rule ID must be unique. Found same ID for more than one rule"},
		{"noncurrent days zero", doc(`<Rule><Filter/><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>0</NoncurrentDays></NoncurrentVersionExpiration></Rule>`), "InvalidArgument", "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer"},
		{"noncurrent without days", doc(`<Rule><Filter/><Status>Enabled</Status><NoncurrentVersionExpiration><NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule>`), "MalformedXML", ""},
		{"abort zero", doc(`<Rule><Filter/><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>0</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`), "InvalidArgument", "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer"},
		{"abort with tag", doc(`<Rule><Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`), "InvalidRequest", "AbortIncompleteMultipartUpload cannot be specified with Tags."},
		{"abort with and tag", doc(`<Rule><Filter><And><Prefix>a</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></And></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`), "InvalidRequest", "AbortIncompleteMultipartUpload cannot be specified with Tags."},
		{"abort with size", doc(`<Rule><Filter><ObjectSizeGreaterThan>5</ObjectSizeGreaterThan></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`), "InvalidRequest", ""},
		{"duplicate and tags", doc(`<Rule><Filter><And><Tag><Key>k</Key><Value>v</Value></Tag><Tag><Key>k</Key><Value>w</Value></Tag></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`), "InvalidRequest", "Duplicate Tag Keys are not allowed."},
		{"empty and", doc(`<Rule><Filter><And></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`), "MalformedXML", ""},
		{"size range inverted", doc(`<Rule><Filter><And><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan><ObjectSizeLessThan>10</ObjectSizeLessThan></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`), "InvalidArgument", ""},
		{"empty tag key", doc(`<Rule><Filter><Tag><Key></Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`), "InvalidTag", ""},
		{"transition", doc(`<Rule><Filter/><Status>Enabled</Status><Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>`), "NotImplemented", ""},
		{"transition days zero", doc(`<Rule><Filter/><Status>Enabled</Status><Transition><Days>0</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>`), "NotImplemented", ""},
		{"transition date", doc(`<Rule><Filter/><Status>Enabled</Status><Transition><Date>2030-01-02T00:00:00Z</Date><StorageClass>DEEP_ARCHIVE</StorageClass></Transition></Rule>`), "NotImplemented", ""},
		{"transition beside expiration", doc(`<Rule><Filter/><Status>Enabled</Status><Expiration><Date>2023-09-27</Date></Expiration><Transition><Date>2022-09-27</Date><StorageClass>GLACIER</StorageClass></Transition></Rule>`), "NotImplemented", ""},
		{"transition date basic format", doc(`<Rule><Filter/><Status>Enabled</Status><Expiration><Date>2023-09-27</Date></Expiration><Transition><Date>20220927</Date><StorageClass>GLACIER</StorageClass></Transition></Rule>`), "InvalidArgument", "'Date' must be in ISO 8601 format"},
		{"transition date not midnight", doc(`<Rule><Filter/><Status>Enabled</Status><Transition><Date>2030-01-02T10:00:00Z</Date><StorageClass>GLACIER</StorageClass></Transition></Rule>`), "InvalidArgument", "'Date' must be at midnight GMT"},
		{"transition date garbage", doc(`<Rule><Filter/><Status>Enabled</Status><Transition><Date>\x01</Date><StorageClass>GLACIER</StorageClass></Transition></Rule>`), "InvalidArgument", "'Date' must be in ISO 8601 format"},
		{"transition date empty", doc(`<Rule><Filter/><Status>Enabled</Status><Transition><Date></Date><StorageClass>GLACIER</StorageClass></Transition></Rule>`), "InvalidArgument", "'Date' must be in ISO 8601 format"},
		{"transition days negative", doc(`<Rule><Filter/><Status>Enabled</Status><Transition><Days>-1</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>`), "InvalidArgument", "'Days' for Transition action must be nonnegative"},
		{"transition days overflow", doc(`<Rule><Filter/><Status>Enabled</Status><Transition><Days>99999999999999999999</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>`), "MalformedXML", ""},
		{"transition days and date", doc(`<Rule><Filter/><Status>Enabled</Status><Transition><Days>1</Days><Date>2030-01-02T00:00:00Z</Date><StorageClass>GLACIER</StorageClass></Transition></Rule>`), "MalformedXML", ""},
		{"transition neither", doc(`<Rule><Filter/><Status>Enabled</Status><Transition><StorageClass>GLACIER</StorageClass></Transition></Rule>`), "MalformedXML", ""},
		{"transition no class", doc(`<Rule><Filter/><Status>Enabled</Status><Transition><Days>1</Days></Transition></Rule>`), "MalformedXML", ""},
		{"transition unknown class", doc(`<Rule><Filter/><Status>Enabled</Status><Transition><Days>1</Days><StorageClass>COLD</StorageClass></Transition></Rule>`), "MalformedXML", ""},
		{"transition to standard", doc(`<Rule><Filter/><Status>Enabled</Status><Transition><Days>1</Days><StorageClass>STANDARD</StorageClass></Transition></Rule>`), "MalformedXML", ""},
		{"noncurrent transition", doc(`<Rule><Filter/><Status>Enabled</Status><NoncurrentVersionTransition><NoncurrentDays>30</NoncurrentDays><StorageClass>STANDARD_IA</StorageClass></NoncurrentVersionTransition></Rule>`), "NotImplemented", ""},
		{"noncurrent transition no days", doc(`<Rule><Filter/><Status>Enabled</Status><NoncurrentVersionTransition><StorageClass>STANDARD_IA</StorageClass></NoncurrentVersionTransition></Rule>`), "MalformedXML", ""},
		{"noncurrent transition negative", doc(`<Rule><Filter/><Status>Enabled</Status><NoncurrentVersionTransition><NoncurrentDays>-3</NoncurrentDays><StorageClass>GLACIER</StorageClass></NoncurrentVersionTransition></Rule>`), "InvalidArgument", ""},
		{"noncurrent transition newer 101", doc(`<Rule><Filter/><Status>Enabled</Status><NoncurrentVersionTransition><NoncurrentDays>3</NoncurrentDays><NewerNoncurrentVersions>101</NewerNoncurrentVersions><StorageClass>GLACIER</StorageClass></NoncurrentVersionTransition></Rule>`), "InvalidArgument", ""},
		// A later rule's error wins over an earlier rule's transition: the
		// whole document is validated before transitions are refused.
		{"transition then bad rule", doc(`<Rule><Filter/><Status>Enabled</Status><Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>`,
			`<Rule><Filter/><Status>Enabled</Status><Expiration><Date>2030-01-02T10:00:00Z</Date></Expiration></Rule>`), "InvalidArgument", "'Date' must be at midnight GMT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.body))
			if tc.code == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				// The canonical form parses back to itself.
				c2, err := Parse([]byte(c.Marshal()))
				if err != nil || c2.Marshal() != c.Marshal() {
					t.Fatalf("round trip: %v\n%s\n%s", err, c.Marshal(), c2.Marshal())
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse = %v, want %s", err, tc.code)
			}
			if e.Code != tc.code || (tc.msg != "" && e.Message != tc.msg) {
				t.Fatalf("Parse = %s %q, want %s %q", e.Code, e.Message, tc.code, tc.msg)
			}
		})
	}
}

func mustParse(t *testing.T, body string) *Configuration {
	t.Helper()
	c, err := Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func day(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestExpiry(t *testing.T) {
	c := mustParse(t, doc(
		`<Rule><ID>logs</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>3</Days></Expiration></Rule>`,
		`<Rule><ID>tmp</ID><Filter><Tag><Key>class</Key><Value>tmp</Value></Tag></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`,
		`<Rule><ID>big</ID><Filter><And><Prefix>data/</Prefix><ObjectSizeGreaterThan>100</ObjectSizeGreaterThan><ObjectSizeLessThan>1000</ObjectSizeLessThan></And></Filter><Status>Enabled</Status><Expiration><Days>10</Days></Expiration></Rule>`,
		`<Rule><ID>off</ID><Filter><Prefix>keep/</Prefix></Filter><Status>Disabled</Status><Expiration><Days>1</Days></Expiration></Rule>`,
		`<Rule><ID>date</ID><Prefix>old/</Prefix><Status>Enabled</Status><Expiration><Date>2026-03-01T00:00:00Z</Date></Expiration></Rule>`,
		`<Rule><ID>marker</ID><Filter/><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration></Rule>`,
	))
	created := day("2026-01-15T10:30:00Z")
	cases := []struct {
		name string
		o    Object
		id   string
		due  string // "" = no expiry
	}{
		// S3's own example: created 10:30 on Jan 15, 3 days → Jan 19 midnight.
		{"prefix days", Object{Key: "logs/a", Size: 5, ModTime: created}, "logs", "2026-01-19T00:00:00Z"},
		{"exact midnight rounds to next", Object{Key: "logs/a", ModTime: day("2026-01-15T00:00:00Z")}, "logs", "2026-01-19T00:00:00Z"},
		{"tag", Object{Key: "x", ModTime: created, Tags: map[string]string{"class": "tmp"}}, "tmp", "2026-01-17T00:00:00Z"},
		{"tag other value", Object{Key: "x", ModTime: created, Tags: map[string]string{"class": "keep"}}, "", ""},
		{"earliest of two", Object{Key: "logs/b", ModTime: created, Tags: map[string]string{"class": "tmp"}}, "tmp", "2026-01-17T00:00:00Z"},
		{"size inside", Object{Key: "data/x", Size: 500, ModTime: created}, "big", "2026-01-26T00:00:00Z"},
		{"size at lower bound", Object{Key: "data/x", Size: 100, ModTime: created}, "", ""},
		{"size at upper bound", Object{Key: "data/x", Size: 1000, ModTime: created}, "", ""},
		{"disabled", Object{Key: "keep/x", ModTime: created}, "", ""},
		{"date", Object{Key: "old/x", ModTime: created}, "date", "2026-03-01T00:00:00Z"},
		{"no match", Object{Key: "other", ModTime: created}, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := c.Expiry(tc.o)
			if tc.due == "" {
				if ok {
					t.Fatalf("Expiry = %+v, want none", a)
				}
				return
			}
			if !ok || a.RuleID != tc.id || !a.Due.Equal(day(tc.due)) {
				t.Fatalf("Expiry = %+v %v, want %s %s", a, ok, tc.id, tc.due)
			}
			if _, ok := c.ExpiredAt(tc.o, a.Due.Add(-time.Nanosecond)); ok {
				t.Fatal("expired before its date")
			}
			if got, ok := c.ExpiredAt(tc.o, a.Due); !ok || got != a {
				t.Fatal("not expired on its date")
			}
		})
	}
	if e, ab := c.HasObjectActions(); !e || ab {
		t.Fatalf("HasObjectActions = %v %v", e, ab)
	}
	got := c.Prefixes()
	want := []string{"logs/", "", "data/", "old/"}
	if strings.Join(got, ",") != strings.Join(minimalPrefixes(want), ",") || len(got) != 1 || got[0] != "" {
		t.Fatalf("Prefixes = %q", got)
	}
}

func TestAbortDue(t *testing.T) {
	c := mustParse(t, doc(
		`<Rule><ID>mpu</ID><Filter><Prefix>up/</Prefix></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>2</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`,
		`<Rule><ID>off</ID><Filter><Prefix>off/</Prefix></Filter><Status>Disabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`,
	))
	a, ok := c.AbortDue("up/x", day("2026-01-15T23:59:59Z"))
	if !ok || a.RuleID != "mpu" || !a.Due.Equal(day("2026-01-18T00:00:00Z")) {
		t.Fatalf("AbortDue = %+v %v", a, ok)
	}
	if _, ok := c.AbortDue("off/x", day("2026-01-15T00:00:00Z")); ok {
		t.Fatal("disabled rule aborts")
	}
	if _, ok := c.AbortDue("other", day("2026-01-15T00:00:00Z")); ok {
		t.Fatal("rule aborts outside its prefix")
	}
	if e, ab := c.HasObjectActions(); e || !ab {
		t.Fatalf("HasObjectActions = %v %v", e, ab)
	}
	if p := c.Prefixes(); p != nil {
		t.Fatalf("Prefixes = %q, want none", p)
	}
}

func TestMinimalPrefixes(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"a/", "a/b/", "b"}, []string{"a/", "b"}},
		{[]string{"a", "a"}, []string{"a"}},
		{[]string{"x", ""}, []string{""}},
		{nil, nil},
	} {
		if got := minimalPrefixes(tc.in); strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("minimalPrefixes(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(doc(`<Rule><ID>a</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>3</Days></Expiration></Rule>`)))
	f.Add([]byte(doc(`<Rule><Filter><And><Prefix>a</Prefix><Tag><Key>k</Key><Value>v</Value></Tag><ObjectSizeGreaterThan>1</ObjectSizeGreaterThan></And></Filter><Status>Enabled</Status><Expiration><Date>2030-01-02T00:00:00Z</Date></Expiration></Rule>`)))
	f.Add([]byte(doc(`<Rule><Prefix></Prefix><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>2</DaysAfterInitiation></AbortIncompleteMultipartUpload><NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays></NoncurrentVersionExpiration></Rule>`)))
	f.Add([]byte("<LifecycleConfiguration><Rule>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := Parse(body)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code == "" || e.Message == "" {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		// A valid document's canonical form is valid and stable.
		c2, err := Parse([]byte(c.Marshal()))
		if err != nil {
			t.Fatalf("canonical form refused: %v\n%s", err, c.Marshal())
		}
		if c2.Marshal() != c.Marshal() {
			t.Fatalf("canonical form unstable:\n%s\n%s", c.Marshal(), c2.Marshal())
		}
		o := Object{Key: "logs/a", Size: 10, ModTime: time.Unix(1700000000, 0), Tags: map[string]string{"k": "v"}}
		if a, ok := c.Expiry(o); ok && !a.Due.Equal(midnight(a.Due)) {
			t.Fatalf("expiry not at midnight UTC: %+v", a)
		}
		c.AbortDue("logs/a", o.ModTime)
		c.Prefixes()
	})
}
