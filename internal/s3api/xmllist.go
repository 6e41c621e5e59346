package s3api

import (
	"bytes"
	"encoding/xml"
	"strconv"
	"unicode/utf8"
)

// appendListV2 appends the ListObjectsV2 answer to dst, byte for byte what
// xml.Marshal makes of v (TestAppendListV2MatchesMarshal holds it to that).
// A 1000-key page is the largest answer a busy listing sends, many times a
// second; written by hand it costs a fraction of the reflection-driven
// encoder's CPU.
func appendListV2(dst []byte, v *xmlListBucketV2) []byte {
	b := bytes.NewBuffer(dst)
	b.WriteString(`<ListBucketResult xmlns="`)
	escapeTo(b, v.NS, false)
	b.WriteString(`">`)
	elem(b, "Name", v.Name)
	elemKey(b, "Prefix", v.Prefix)
	elemKeyOmit(b, "StartAfter", v.StartAfter)
	if v.ContinuationToken != nil {
		elem(b, "ContinuationToken", *v.ContinuationToken)
	}
	elemOmit(b, "NextContinuationToken", v.NextContinuationToken)
	elemRaw(b, "KeyCount", strconv.Itoa(v.KeyCount))
	elemRaw(b, "MaxKeys", strconv.Itoa(v.MaxKeys))
	elemKeyOmit(b, "Delimiter", v.Delimiter)
	elemOmit(b, "EncodingType", v.EncodingType)
	elemRaw(b, "IsTruncated", strconv.FormatBool(v.IsTruncated))
	for i := range v.Contents {
		o := &v.Contents[i]
		b.WriteString("<Contents>")
		elemKey(b, "Key", o.Key)
		elem(b, "LastModified", o.LastModified)
		elem(b, "ETag", o.ETag)
		elemOmit(b, "ChecksumAlgorithm", o.ChecksumAlgorithm)
		elemOmit(b, "ChecksumType", o.ChecksumType)
		elemRaw(b, "Size", strconv.FormatInt(o.Size, 10))
		elem(b, "StorageClass", o.StorageClass)
		if o.Owner != nil {
			b.WriteString("<Owner>")
			elem(b, "ID", o.Owner.ID)
			elem(b, "DisplayName", o.Owner.DisplayName)
			b.WriteString("</Owner>")
		}
		b.WriteString("</Contents>")
	}
	for _, p := range v.CommonPrefixes {
		b.WriteString("<CommonPrefixes>")
		elemKey(b, "Prefix", p.Prefix)
		b.WriteString("</CommonPrefixes>")
	}
	b.WriteString("</ListBucketResult>")
	return b.Bytes()
}

func elem(b *bytes.Buffer, name, text string) { elemText(b, name, text, false) }

// elemKey writes an xmlText field.
func elemKey(b *bytes.Buffer, name string, text xmlText) { elemText(b, name, string(text), true) }

func elemText(b *bytes.Buffer, name, text string, refs bool) {
	b.WriteByte('<')
	b.WriteString(name)
	b.WriteByte('>')
	escapeTo(b, text, refs)
	b.WriteString("</")
	b.WriteString(name)
	b.WriteByte('>')
}

func elemOmit(b *bytes.Buffer, name, text string) {
	if text != "" {
		elem(b, name, text)
	}
}

func elemKeyOmit(b *bytes.Buffer, name string, text xmlText) {
	if text != "" {
		elemKey(b, name, text)
	}
}

// elemRaw writes text that needs no escaping (numbers, booleans).
func elemRaw(b *bytes.Buffer, name, text string) {
	b.WriteByte('<')
	b.WriteString(name)
	b.WriteByte('>')
	b.WriteString(text)
	b.WriteString("</")
	b.WriteString(name)
	b.WriteByte('>')
}

// escapeTo writes s escaped as encoding/xml escapes text and attribute
// values, except for what XML 1.0 cannot carry: with refs (xmlText, the
// fields that hold keys) such a character is written as a hexadecimal
// character reference, &#x1; for U+0001, as S3 writes it in listings
// (a client that cannot read those asks for encoding-type=url, which
// boto3 does by default); without refs it becomes U+FFFD, as in
// encoding/xml. Invalid UTF-8 becomes U+FFFD either way (keys are valid
// UTF-8, see engine's key rules). ASCII text, nearly every key and every
// ETag (whose quotes are escaped), is escaped without allocating.
func escapeTo(b *bytes.Buffer, s string, refs bool) {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		var esc string
		width := 1
		switch {
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(s[i:])
			width = n
			switch {
			case r == utf8.RuneError && n == 1:
				esc = "\uFFFD"
			case isXMLChar(r):
				i += n
				continue
			case refs:
				esc = charRef(r)
			default:
				esc = "\uFFFD"
			}
		case c == '"':
			esc = "&#34;"
		case c == '\'':
			esc = "&#39;"
		case c == '&':
			esc = "&amp;"
		case c == '<':
			esc = "&lt;"
		case c == '>':
			esc = "&gt;"
		case c == '\t':
			esc = "&#x9;"
		case c == '\n':
			esc = "&#xA;"
		case c == '\r':
			esc = "&#xD;"
		case c < 0x20 && refs:
			esc = charRef(rune(c))
		case c < 0x20:
			esc = "\uFFFD"
		default:
			i++
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(esc)
		i += width
		last = i
	}
	b.WriteString(s[last:])
}

// isXMLChar reports whether r is a character XML 1.0 allows (its Char
// production), as encoding/xml decides it.
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// charRef is S3's spelling of a character reference: lower-case
// hexadecimal without leading zeros.
func charRef(r rune) string { return "&#x" + strconv.FormatInt(int64(r), 16) + ";" }

// xmlText is a listing field that can hold an object key (Key, Prefix,
// Delimiter, StartAfter, the markers) in ListObjects V1 and V2,
// ListObjectVersions and ListMultipartUploads: it marshals as escapeTo
// writes it with refs, so a key with control characters is listed as S3
// lists it instead of with U+FFFD in its place, which no client could
// map back to the key. A client whose XML 1.0 parser refuses the
// references asks for encoding-type=url, as S3's SDKs do for listings.
// Answers about one object (errors, InitiateMultipartUpload,
// CompleteMultipartUpload, ListParts, DeleteObjects, POST object) keep
// plain strings: those have no encoding-type, and an SDK must be able to
// parse them (docs/conformance.md).
type xmlText string

// MarshalXML writes the element with t escaped by escapeTo.
func (t xmlText) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	var b bytes.Buffer
	escapeTo(&b, string(t), true)
	return e.EncodeElement(struct {
		Text string `xml:",innerxml"`
	}{b.String()}, start)
}
