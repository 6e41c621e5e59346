package s3api

import (
	"net/url"
	"testing"
)

// TestRedirectURL: success_action_redirect gets bucket, key and etag
// appended in S3's order, each URL-encoded, whatever the key holds and
// whatever query the form's URL already had.
func TestRedirectURL(t *testing.T) {
	for _, tc := range []struct {
		redirect, key, etag, want string
	}{
		{"http://127.0.0.1:9000/b", "foo.txt", `"37b5"`, "http://127.0.0.1:9000/b?bucket=bkt&key=foo.txt&etag=%2237b5%22"},
		{"https://app.example/done?x=1", "a b/c", `"e"`, "https://app.example/done?x=1&bucket=bkt&key=a+b%2Fc&etag=%22e%22"},
		{"https://app.example/done#frag", "k", `"e"`, "https://app.example/done?bucket=bkt&key=k&etag=%22e%22#frag"},
		{"https://app.example/", "&key=evil&x=#?", `"e"`, "https://app.example/?bucket=bkt&key=%26key%3Devil%26x%3D%23%3F&etag=%22e%22"},
		{"https://app.example/", "é\x01+%", `"e-2"`, "https://app.example/?bucket=bkt&key=%C3%A9%01%2B%25&etag=%22e-2%22"},
		{"https://app.example", "k", `"e"`, "https://app.example?bucket=bkt&key=k&etag=%22e%22"},
	} {
		u, err := url.Parse(tc.redirect)
		if err != nil {
			t.Fatal(err)
		}
		got := redirectURL(u, "bkt", tc.key, tc.etag)
		if got != tc.want {
			t.Errorf("%q, key %q: %q, want %q", tc.redirect, tc.key, got, tc.want)
		}
		// A client reading the query gets the key back.
		back, err := url.Parse(got)
		if err != nil || back.Query().Get("key") != tc.key || back.Query().Get("etag") != tc.etag {
			t.Errorf("%q does not read back: %v %v", got, back.Query(), err)
		}
	}
}
