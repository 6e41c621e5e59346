package s3api

import (
	"bytes"
	"encoding/xml"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestAppendListV2MatchesMarshal: the hand-written ListObjectsV2 encoder
// writes exactly what encoding/xml writes, for keys with everything XML
// must escape or cannot carry (control characters, invalid UTF-8,
// markup, quotes), with and without the optional fields.
func TestAppendListV2MatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "Z", "/", " ", "&", "<", ">", "\"", "'", "\t", "\n", "\r", "\x00", "\x01", "\x7f",
		"é", "日本", "\xff", "\xed\xa0\x80", "]]>", "\uFFFE", "\U0001F600", "%2F", "."}
	str := func(max int) string {
		n := r.IntN(max + 1)
		s := ""
		for range n {
			s += alphabet[r.IntN(len(alphabet))]
		}
		return s
	}
	for i := range 2000 {
		v := xmlListBucketV2{NS: s3NS, Name: str(5), Prefix: xmlText(str(4)), KeyCount: r.IntN(1001), MaxKeys: r.IntN(1001),
			IsTruncated: r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			token := str(3)
			v.StartAfter, v.ContinuationToken, v.NextContinuationToken = xmlText(str(3)), &token, str(3)
			v.Delimiter, v.EncodingType = xmlText(str(2)), str(1)
		}
		for range r.IntN(6) {
			o := xmlObject{Key: xmlText(str(8)), LastModified: "2026-11-24T04:00:00.000Z", ETag: `"` + str(3) + `"`,
				Size: r.Int64N(1 << 40), StorageClass: str(2)}
			if r.IntN(3) == 0 {
				o.ChecksumAlgorithm, o.ChecksumType = str(2), str(2)
			}
			if r.IntN(3) == 0 {
				o.Owner = &xmlOwner{ID: str(3), DisplayName: str(3)}
			}
			v.Contents = append(v.Contents, o)
		}
		for range r.IntN(3) {
			v.CommonPrefixes = append(v.CommonPrefixes, xmlPrefix{Prefix: xmlText(str(5))})
		}
		want, err := xml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendListV2(nil, &v); string(got) != string(want) {
			t.Fatalf("case %d differs:\n got %q\nwant %q", i, got, want)
		}
	}
}

func BenchmarkListV2Encode(b *testing.B) {
	v := xmlListBucketV2{NS: s3NS, Name: "bucket", MaxKeys: 1000, KeyCount: 1000, IsTruncated: true}
	for i := range 1000 {
		v.Contents = append(v.Contents, xmlObject{Key: xmlText("shardstore-bench/w001/" + string(rune('a'+i%26)) + "000123"),
			LastModified: "2026-11-24T04:00:00.000Z", ETag: `"0123456789abcdef0123456789abcdef"`, Size: 1, StorageClass: "STANDARD"})
	}
	b.Run("encoding/xml", func(b *testing.B) {
		for b.Loop() {
			if _, err := xml.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appendListV2", func(b *testing.B) {
		for b.Loop() {
			appendListV2(nil, &v)
		}
	})
}

// TestEscapeKeys: the fields that hold keys (xmlText) carry what XML 1.0
// cannot as hexadecimal character references, as S3 lists them
// ("a\x19\x07" is listed as a&#x19;&#x7;); other text keeps
// encoding/xml's U+FFFD; markup is escaped either way.
func TestEscapeKeys(t *testing.T) {
	for _, tc := range []struct {
		in, refs, plain string
	}{
		{"plain/key.txt", "plain/key.txt", "plain/key.txt"},
		{"a\x19\x07", "a&#x19;&#x7;", "a\uFFFD\uFFFD"},
		{"\x00", "&#x0;", "\uFFFD"},
		{"\x01\x1f", "&#x1;&#x1f;", "\uFFFD\uFFFD"},
		{"\x7f", "\x7f", "\x7f"}, // DEL is an XML character
		{"\t\n\r", "&#x9;&#xA;&#xD;", "&#x9;&#xA;&#xD;"},
		{`<a href="x">&'`, "&lt;a href=&#34;x&#34;&gt;&amp;&#39;", "&lt;a href=&#34;x&#34;&gt;&amp;&#39;"},
		{"]]>", "]]&gt;", "]]&gt;"},
		{"é\x01日本", "é&#x1;日本", "é\uFFFD日本"},
		{"\uFFFE\uFFFF", "&#xfffe;&#xffff;", "\uFFFD\uFFFD"},
		{"\U0001F600", "\U0001F600", "\U0001F600"},
		{"\xff", "\uFFFD", "\uFFFD"},                                 // invalid UTF-8: no key has it
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD", "\uFFFD\uFFFD\uFFFD"}, // a surrogate's bytes
	} {
		var refs, plain bytes.Buffer
		escapeTo(&refs, tc.in, true)
		escapeTo(&plain, tc.in, false)
		if refs.String() != tc.refs || plain.String() != tc.plain {
			t.Errorf("%q: refs %q plain %q, want %q %q", tc.in, refs.String(), plain.String(), tc.refs, tc.plain)
		}
		var std bytes.Buffer
		_ = xml.EscapeText(&std, []byte(tc.in))
		if plain.String() != std.String() {
			t.Errorf("%q: plain %q, encoding/xml %q", tc.in, plain.String(), std.String())
		}
		// Through encoding/xml, as ListObjects V1 and ListObjectVersions
		// marshal them.
		out, err := xml.Marshal(xmlObject{Key: xmlText(tc.in)})
		if err != nil || !bytes.Contains(out, []byte("<Key>"+tc.refs+"</Key>")) {
			t.Errorf("%q marshals as %s (%v)", tc.in, out, err)
		}
	}
	// An empty xmlText with omitempty is left out, as a string would be.
	out, _ := xml.Marshal(xmlListBucketV2{})
	if bytes.Contains(out, []byte("<StartAfter>")) || bytes.Contains(out, []byte("<Delimiter>")) ||
		bytes.Contains(out, []byte("<ContinuationToken>")) {
		t.Errorf("empty optional fields written: %s", out)
	}
}

// FuzzEscapeKey: a key escaped for a listing decodes back to itself with
// an XML 1.1-tolerant reader (the references S3 writes), and its escaped
// form holds no byte XML 1.0 forbids raw.
func FuzzEscapeKey(f *testing.F) {
	for _, s := range []string{"a", "a\x19\x07", "\x00", "<&>\"'", "\r\n", "\uFFFE", "é日本\U0001F600", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		escapeTo(&b, s, true)
		out := b.String()
		for i := 0; i < len(out); i++ {
			if c := out[i]; c < 0x20 {
				t.Fatalf("%q escaped to %q: raw control byte %#x", s, out, c)
			}
		}
		if !utf8.ValidString(s) {
			return
		}
		if got := unescapeRefs(t, out); got != s {
			t.Fatalf("%q escaped to %q reads back as %q", s, out, got)
		}
	})
}

// unescapeRefs reads text escapeTo wrote: the five entities and
// &#xN; / &#N; references of any code point.
func unescapeRefs(t *testing.T, s string) string {
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexByte(s, '&')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		j := strings.IndexByte(s, ';')
		if j < 0 {
			t.Fatalf("unterminated reference in %q", s)
		}
		ref := s[1:j]
		s = s[j+1:]
		switch {
		case ref == "amp":
			b.WriteByte('&')
		case ref == "lt":
			b.WriteByte('<')
		case ref == "gt":
			b.WriteByte('>')
		case strings.HasPrefix(ref, "#x"):
			n, err := strconv.ParseUint(ref[2:], 16, 32)
			if err != nil {
				t.Fatalf("bad reference %q", ref)
			}
			b.WriteRune(rune(n))
		case strings.HasPrefix(ref, "#"):
			n, err := strconv.ParseUint(ref[1:], 10, 32)
			if err != nil {
				t.Fatalf("bad reference %q", ref)
			}
			b.WriteRune(rune(n))
		default:
			t.Fatalf("unknown entity %q", ref)
		}
	}
	return b.String()
}
