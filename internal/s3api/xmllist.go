package s3api

import (
	"bytes"
	"encoding/xml"
	"strconv"
)

// appendListV2 appends the ListObjectsV2 answer to dst, byte for byte what
// xml.Marshal makes of v (TestAppendListV2MatchesMarshal holds it to that).
// A 1000-key page is the largest answer a busy listing sends, many times a
// second; written by hand it costs a fraction of the reflection-driven
// encoder's CPU.
func appendListV2(dst []byte, v *xmlListBucketV2) []byte {
	b := bytes.NewBuffer(dst)
	b.WriteString(`<ListBucketResult xmlns="`)
	escapeTo(b, v.NS)
	b.WriteString(`">`)
	elem(b, "Name", v.Name)
	elem(b, "Prefix", v.Prefix)
	elemOmit(b, "StartAfter", v.StartAfter)
	elemOmit(b, "ContinuationToken", v.ContinuationToken)
	elemOmit(b, "NextContinuationToken", v.NextContinuationToken)
	elemRaw(b, "KeyCount", strconv.Itoa(v.KeyCount))
	elemRaw(b, "MaxKeys", strconv.Itoa(v.MaxKeys))
	elemOmit(b, "Delimiter", v.Delimiter)
	elemOmit(b, "EncodingType", v.EncodingType)
	elemRaw(b, "IsTruncated", strconv.FormatBool(v.IsTruncated))
	for i := range v.Contents {
		o := &v.Contents[i]
		b.WriteString("<Contents>")
		elem(b, "Key", o.Key)
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
		elem(b, "Prefix", p.Prefix)
		b.WriteString("</CommonPrefixes>")
	}
	b.WriteString("</ListBucketResult>")
	return b.Bytes()
}

func elem(b *bytes.Buffer, name, text string) {
	b.WriteByte('<')
	b.WriteString(name)
	b.WriteByte('>')
	escapeTo(b, text)
	b.WriteString("</")
	b.WriteString(name)
	b.WriteByte('>')
}

func elemOmit(b *bytes.Buffer, name, text string) {
	if text != "" {
		elem(b, name, text)
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
// values (characters XML cannot carry become U+FFFD). ASCII text, nearly
// every key and every ETag (whose quotes are escaped), is escaped here
// without allocating; text with other bytes goes to xml.EscapeText.
func escapeTo(b *bytes.Buffer, s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var esc string
		switch {
		case c >= 0x80:
			_ = xml.EscapeText(b, []byte(s[last:]))
			return
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
		case c < 0x20:
			esc = "\uFFFD"
		default:
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(esc)
		last = i + 1
	}
	b.WriteString(s[last:])
}
