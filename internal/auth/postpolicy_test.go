package auth

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

var postNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func postVerifier(region string) *Verifier {
	return &Verifier{Region: region, Users: NewUsers(testID), Now: func() time.Time { return postNow }}
}

// signedForm returns a SigV4 form for conditions plus the given fields.
func signedForm(t *testing.T, id Identity, expires time.Time, conditions []any, fields map[string]string) PostForm {
	t.Helper()
	auth, err := SignPostPolicy(id, "us-east-1", postNow, expires, conditions)
	if err != nil {
		t.Fatal(err)
	}
	form := PostForm{"bucket": "photos"}
	for k, v := range auth {
		form[k] = v
	}
	for k, v := range fields {
		form[k] = v
	}
	return form
}

func wantPostErr(t *testing.T, err error, code, msgPart string) {
	t.Helper()
	var ae *Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %v, want %s", err, code)
	}
	if ae.Code != code || !strings.Contains(ae.Message, msgPart) {
		t.Fatalf("error %s %q, want %s containing %q", ae.Code, ae.Message, code, msgPart)
	}
}

func TestVerifyPostAccepts(t *testing.T) {
	v := postVerifier("")
	conds := []any{
		map[string]string{"bucket": "photos"},
		[]any{"starts-with", "$key", "user/"},
		map[string]string{"acl": "public-read"},
		[]any{"starts-with", "$Content-Type", "image/"},
		[]any{"eq", "$x-amz-meta-uuid", "14365123651274"},
		[]any{"content-length-range", 10, 1048576},
	}
	form := signedForm(t, testID, postNow.Add(time.Hour), conds, map[string]string{
		"key": "user/${filename}", "acl": "public-read", "content-type": "image/png",
		"x-amz-meta-uuid": "14365123651274", "x-ignore-note": "anything",
	})
	up, err := v.VerifyPost(form)
	if err != nil {
		t.Fatal(err)
	}
	if up.Anonymous || up.Identity.AccessKey != testID.AccessKey || up.MinLength != 10 || up.MaxLength != 1048576 {
		t.Fatalf("upload %+v", up)
	}
}

func TestVerifyPostRefuses(t *testing.T) {
	v := postVerifier("")
	base := []any{map[string]string{"bucket": "photos"}, []any{"starts-with", "$key", "user/"}}
	ok := map[string]string{"key": "user/a"}
	cases := []struct {
		name      string
		form      func() PostForm
		code, msg string
	}{
		{"expired", func() PostForm { return signedForm(t, testID, postNow.Add(-time.Second), base, ok) },
			CodeAccessDenied, "Invalid according to Policy: Policy expired."},
		{"key outside prefix", func() PostForm {
			return signedForm(t, testID, postNow.Add(time.Hour), base, map[string]string{"key": "other/a"})
		}, CodeAccessDenied, `Policy Condition failed: ["starts-with", "$key", "user/"]`},
		{"other bucket", func() PostForm {
			f := signedForm(t, testID, postNow.Add(time.Hour), base, ok)
			f["bucket"] = "secrets"
			return f
		}, CodeAccessDenied, `Policy Condition failed: ["eq", "$bucket", "photos"]`},
		{"extra field", func() PostForm {
			return signedForm(t, testID, postNow.Add(time.Hour), base, map[string]string{"key": "user/a", "x-amz-meta-evil": "1", "acl": "public-read-write"})
		}, CodeAccessDenied, "Extra input fields: acl, x-amz-meta-evil"},
		{"tampered policy", func() PostForm {
			f := signedForm(t, testID, postNow.Add(time.Hour), base, ok)
			doc, _ := base64.StdEncoding.DecodeString(f["policy"])
			f["policy"] = base64.StdEncoding.EncodeToString([]byte(strings.Replace(string(doc), "user/", "", 1)))
			return f
		}, CodeSignatureDoesNotMatch, msgSignatureDoesNotMatch},
		{"wrong secret", func() PostForm {
			return signedForm(t, Identity{AccessKey: testID.AccessKey, SecretKey: "not-the-secret"}, postNow.Add(time.Hour), base, ok)
		}, CodeSignatureDoesNotMatch, msgSignatureDoesNotMatch},
		{"unknown access key", func() PostForm {
			return signedForm(t, Identity{AccessKey: "NOBODY", SecretKey: "whatever1"}, postNow.Add(time.Hour), base, ok)
		}, CodeInvalidAccessKeyID, msgInvalidAccessKeyID},
		{"signature without policy", func() PostForm {
			f := signedForm(t, testID, postNow.Add(time.Hour), base, ok)
			delete(f, "policy")
			return f
		}, CodeInvalidArgument, "must contain a field named 'policy'"},
		{"credential missing", func() PostForm {
			f := signedForm(t, testID, postNow.Add(time.Hour), base, ok)
			delete(f, "x-amz-credential")
			return f
		}, CodeInvalidArgument, "must contain a field named 'x-amz-credential'"},
		{"date not the credential's", func() PostForm {
			f := signedForm(t, testID, postNow.Add(time.Hour), base, ok)
			f["x-amz-date"] = "20260302T000000Z"
			return f
		}, CodeInvalidArgument, "not the same as x-amz-date"},
		{"session token", func() PostForm {
			return signedForm(t, testID, postNow.Add(time.Hour), append(base, map[string]string{"x-amz-security-token": "t"}), map[string]string{"key": "user/a", "x-amz-security-token": "t"})
		}, CodeInvalidToken, msgInvalidToken},
		{"both signature versions", func() PostForm {
			f := signedForm(t, testID, postNow.Add(time.Hour), base, ok)
			f["signature"] = "x"
			return f
		}, CodeInvalidArgument, "only one auth mechanism"},
		{"not base64", func() PostForm { return v2Form("%%%") }, CodeInvalidPolicyDocument, "Invalid base64"},
		{"not JSON", func() PostForm {
			return v2Form(base64.StdEncoding.EncodeToString([]byte("{nope")))
		}, CodeInvalidPolicyDocument, "Invalid JSON"},
		{"no expiration", func() PostForm {
			return v2Form(base64.StdEncoding.EncodeToString([]byte(`{"conditions":[]}`)))
		}, CodeInvalidPolicyDocument, "missing expiration"},
		{"no conditions", func() PostForm {
			return v2Form(base64.StdEncoding.EncodeToString([]byte(`{"expiration":"2030-01-01T00:00:00Z"}`)))
		}, CodeInvalidPolicyDocument, "missing conditions"},
		{"unknown operation", func() PostForm {
			return v2Form(base64.StdEncoding.EncodeToString([]byte(`{"expiration":"2030-01-01T00:00:00Z","conditions":[["ends-with","$key","x"]]}`)))
		}, CodeInvalidPolicyDocument, "unknown operation"},
		{"bad range", func() PostForm {
			return v2Form(base64.StdEncoding.EncodeToString([]byte(`{"expiration":"2030-01-01T00:00:00Z","conditions":[["content-length-range",10,1]]}`)))
		}, CodeInvalidPolicyDocument, "content-length-range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.VerifyPost(c.form())
			wantPostErr(t, err, c.code, c.msg)
		})
	}
}

func TestVerifyPostStrictRegion(t *testing.T) {
	v := postVerifier("eu-west-1")
	form := signedForm(t, testID, postNow.Add(time.Hour), []any{[]any{"starts-with", "$key", ""}}, map[string]string{"key": "k"})
	_, err := v.VerifyPost(form)
	wantPostErr(t, err, CodeInvalidArgument, "the region 'us-east-1' is wrong; expecting 'eu-west-1'")
}

// v2Form is a SigV2-signed form with key "a" and the given policy.
func v2Form(policy string) PostForm {
	return PostForm{"policy": policy, "key": "a", "awsaccesskeyid": testID.AccessKey,
		"signature": signV2([]byte(testID.SecretKey), policy)}
}

func TestVerifyPostV2AndAnonymous(t *testing.T) {
	v := postVerifier("")
	doc := `{"expiration": "2026-03-01T13:00:00.000Z", "conditions": [{"bucket": "photos"}, ["starts-with", "$key", ""], ["content-length-range", "0", "100"]]}`
	policy := base64.StdEncoding.EncodeToString([]byte(doc))
	form := PostForm{"bucket": "photos", "key": "k", "policy": policy, "awsaccesskeyid": testID.AccessKey,
		"signature": signV2([]byte(testID.SecretKey), policy)}
	up, err := v.VerifyPost(form)
	if err != nil {
		t.Fatal(err)
	}
	if up.Anonymous || up.MaxLength != 100 {
		t.Fatalf("v2 upload %+v", up)
	}
	form["signature"] = signV2([]byte("wrong-secret"), policy)
	_, err = v.VerifyPost(form)
	wantPostErr(t, err, CodeSignatureDoesNotMatch, msgSignatureDoesNotMatch)
	delete(form, "awsaccesskeyid")
	_, err = v.VerifyPost(form)
	wantPostErr(t, err, CodeInvalidArgument, "AWSAccessKeyId")

	// No policy and no signature: anonymous.
	up, err = v.VerifyPost(PostForm{"bucket": "photos", "key": "k", "acl": "public-read"})
	if err != nil || !up.Anonymous || up.MaxLength != -1 {
		t.Fatalf("anonymous upload %+v %v", up, err)
	}
	// A policy without its signature is 400 InvalidArgument naming the
	// field that is missing, as S3 answers (ceph s3-tests
	// test_post_object_missing_signature).
	for _, tc := range []struct {
		form  PostForm
		field string
	}{
		{PostForm{"bucket": "photos", "key": "k", "policy": policy}, "'AWSAccessKeyId'"},
		{PostForm{"bucket": "photos", "key": "k", "policy": policy, "awsaccesskeyid": testID.AccessKey}, "'Signature'"},
		{PostForm{"bucket": "photos", "key": "k", "policy": policy, "awsaccesskeyid": ""}, "'AWSAccessKeyId'"},
		{PostForm{"bucket": "photos", "key": "k", "policy": policy, "x-amz-credential": "x"}, "'X-Amz-Signature'"},
		{PostForm{"bucket": "photos", "key": "k", "policy": policy, "x-amz-algorithm": algorithm,
			"x-amz-date": "20260301T120000Z"}, "'X-Amz-Signature'"},
		{PostForm{"bucket": "photos", "key": "k", "policy": "", "acl": "public-read"}, "'AWSAccessKeyId'"},
	} {
		_, err = v.VerifyPost(tc.form)
		wantPostErr(t, err, CodeInvalidArgument, "Bucket POST must contain a field named "+tc.field)
	}
}

// TestPostPolicyKeysAreCaseSensitive: the policy document's own keys are
// "expiration" and "conditions" exactly (S3 refuses "EXPIRATION" or
// "CONDITIONS" with 400), while the field names and operations its
// conditions use are not case-sensitive.
func TestPostPolicyKeysAreCaseSensitive(t *testing.T) {
	for _, tc := range []struct {
		doc, msg string // msg "": valid
	}{
		{`{"expiration": "2030-01-01T00:00:00Z", "conditions": [["StArTs-WiTh", "$KeY", ""], {"bUcKeT": "b"}]}`, ""},
		{`{"EXPIRATION": "2030-01-01T00:00:00Z", "conditions": []}`, "Policy missing expiration."},
		{`{"Expiration": "2030-01-01T00:00:00Z", "conditions": []}`, "Policy missing expiration."},
		{`{"expiration": "2030-01-01T00:00:00Z", "CONDITIONS": []}`, "Policy missing conditions."},
		{`{"expiration": "2030-01-01T00:00:00Z", "Conditions": [], "conditions": null}`, "Policy missing conditions."},
		{`{"expiration": null, "conditions": []}`, "Policy missing expiration."},
		{`{"expiration": 5, "conditions": []}`, "Invalid 'expiration' value: '5'"},
		{`{"expiration": "2030-01-01T00:00:00Z", "conditions": {}}`, "Invalid JSON."},
		{`{"expiration": "2030-01-01T00:00:00Z", "conditions": []}`, ""},
		{`[]`, "Invalid JSON."},
		{`null`, "Policy missing expiration."},
	} {
		_, err := parsePostPolicy(base64.StdEncoding.EncodeToString([]byte(tc.doc)))
		switch {
		case tc.msg == "" && err != nil:
			t.Errorf("%s: %v", tc.doc, err)
		case tc.msg != "" && (err == nil || err.Code != CodeInvalidPolicyDocument || err.Message != "Invalid Policy: "+tc.msg):
			t.Errorf("%s: %v, want InvalidPolicyDocument %q", tc.doc, err, tc.msg)
		}
	}
}

func FuzzParsePostPolicy(f *testing.F) {
	f.Add(`{"expiration":"2030-01-01T00:00:00Z","conditions":[{"bucket":"b"},["starts-with","$key",""],["content-length-range",1,2]]}`)
	f.Add(`{"expiration":"x","conditions":[[]]}`)
	f.Add(`{"expiration":"2030-01-01T00:00:00Z","conditions":[{"a":1},["eq"]]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		p, err := parsePostPolicy(base64.StdEncoding.EncodeToString([]byte(doc)))
		if err != nil {
			if p != nil {
				t.Fatal("policy with error")
			}
			return
		}
		_ = p.check(PostForm{"key": "k", "bucket": "b"}, postNow)
	})
}
