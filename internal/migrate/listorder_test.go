package migrate

import (
	"strings"
	"testing"
)

// TestListingOrder: the entries of a ListVersionsResult in the answer's
// order; anything else is refused, hostile documents included.
func TestListingOrder(t *testing.T) {
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<ListVersionsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name>
<Version><Key>k</Key><VersionId>3/B=</VersionId><IsLatest>true</IsLatest></Version>
<DeleteMarker><Key>k</Key><VersionId>3/M</VersionId></DeleteMarker>
<Version><Key>k</Key><VersionId>3/A</VersionId><Owner><ID>x</ID></Owner></Version>
<Version><Key>k&amp;ü</Key><VersionId></VersionId></Version>
<CommonPrefixes><Prefix>p/</Prefix></CommonPrefixes>
</ListVersionsResult>`
	got, err := listingOrder([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, e := range got {
		s = append(s, e.key+" "+e.id+" "+map[bool]string{true: "marker", false: "version"}[e.marker])
	}
	if want := "k 3/B= version, k 3/M marker, k 3/A version, k&ü null version"; strings.Join(s, ", ") != want {
		t.Fatalf("order %q, want %q", strings.Join(s, ", "), want)
	}
	for name, bad := range map[string]string{
		"empty":            "",
		"not xml":          "hello",
		"another document": `<ListBucketResult><Contents><Key>k</Key></Contents></ListBucketResult>`,
		"unclosed":         `<ListVersionsResult><Version><Key>k</Key>`,
		"unbalanced":       `<ListVersionsResult><Version><Key>k</Key></Version>`,
		"bad entity":       `<!DOCTYPE x [<!ENTITY a "aaaa">]><ListVersionsResult><Version><Key>&a;</Key></Version></ListVersionsResult>`,
		"two roots":        `<ListVersionsResult></ListVersionsResult><ListVersionsResult></ListVersionsResult>`,
		"nested key":       `<ListVersionsResult><Version><Key><b>k</b></Key></Version></ListVersionsResult>`,
	} {
		if got, err := listingOrder([]byte(bad)); err == nil && len(got) > 0 {
			t.Errorf("%s: read as %+v", name, got)
		}
	}
	deep := `<ListVersionsResult>` + strings.Repeat("<a>", 100000) + strings.Repeat("</a>", 100000) + `</ListVersionsResult>`
	if got, err := listingOrder([]byte(deep)); err == nil && len(got) != 0 {
		t.Errorf("a deep document: %+v", got)
	}
}

// FuzzListingOrder: any answer is read or refused, never a panic, and
// what is read names entries of one of the two kinds.
func FuzzListingOrder(f *testing.F) {
	f.Add([]byte(`<ListVersionsResult><Version><Key>k</Key><VersionId>1</VersionId></Version><DeleteMarker><Key>k</Key></DeleteMarker></ListVersionsResult>`))
	f.Add([]byte(`<ListVersionsResult><Version><Version><Key>k</Key></Version></Version></ListVersionsResult>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := listingOrder(body)
		if err != nil {
			return
		}
		for _, e := range got {
			if e.id == "" || e.key == "" {
				t.Fatalf("an entry without a key or an id: %+v", e)
			}
		}
	})
}
