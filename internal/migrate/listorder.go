package migrate

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// A ListObjectVersions answer gives each key's versions and delete
// markers in one order, newest first, as <Version> and <DeleteMarker>
// elements side by side; the SDK splits them into two lists. Where a
// version and a marker of a key have the same time (a listing gives
// milliseconds, some stores seconds), only that order tells which came
// first, so the listing's body is kept (captureBody) and the order read
// back from it (listingOrder).

// maxListingBody bounds the listing page kept: 1,000 entries of a key
// and a version id of 1,024 bytes each, escaped, and their other fields.
const maxListingBody = 16 << 20

// captureBody is an API option that keeps, in *buf, the body of the
// answer to the call (the last attempt's), up to maxListingBody bytes;
// *buf is nil when the answer was longer.
func captureBody(buf *[]byte) func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Deserialize.Add(middleware.DeserializeMiddlewareFunc("ShardstoreListingOrder",
			func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleDeserialize(ctx, in)
				*buf = nil
				if resp, ok := out.RawResponse.(*smithyhttp.Response); ok && resp.Body != nil {
					t := &teeBody{rc: resp.Body, buf: buf}
					*buf = []byte{}
					resp.Body = t
				}
				return out, md, err
			}), middleware.After)
	}
}

// teeBody keeps what is read through it in *buf, until maxListingBody.
type teeBody struct {
	rc  io.ReadCloser
	buf *[]byte
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	if *t.buf != nil {
		if len(*t.buf)+n > maxListingBody {
			*t.buf = nil
		} else {
			*t.buf = append(*t.buf, p[:n]...)
		}
	}
	return n, err
}

func (t *teeBody) Close() error { return t.rc.Close() }

// listed is one entry of a ListObjectVersions answer.
type listed struct {
	key, id string
	marker  bool
}

// listingOrder reads the <Version> and <DeleteMarker> entries of a
// ListVersionsResult in the order the answer gives them. Anything else
// than such a document is an error (the caller then does without).
func listingOrder(body []byte) ([]listed, error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	var out []listed
	depth := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 1 {
				if t.Name.Local != "ListVersionsResult" {
					return nil, fmt.Errorf("a %s document, not ListVersionsResult", t.Name.Local)
				}
				continue
			}
			if depth == 2 && (t.Name.Local == "Version" || t.Name.Local == "DeleteMarker") {
				var e struct {
					Key       string
					VersionId string
				}
				if err := d.DecodeElement(&e, &t); err != nil {
					return nil, err
				}
				depth--
				if e.Key == "" {
					return nil, fmt.Errorf("a %s without a key", t.Name.Local)
				}
				if e.VersionId == "" {
					e.VersionId = "null"
				}
				out = append(out, listed{key: e.Key, id: e.VersionId, marker: t.Name.Local == "DeleteMarker"})
			}
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 {
		return nil, errors.New("unbalanced document")
	}
	return out, nil
}
