package policy

import "testing"

// BenchmarkEvaluate measures one decision on the GET/PUT path against a
// typical bucket policy (public prefix, per-user homes with a variable,
// an IP deny): it must stay far below a request's cost (microseconds).
func BenchmarkEvaluate(b *testing.B) {
	p, err := Parse([]byte(`{"Version": "2012-10-17", "Statement": [
	  {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::examplebucket/public/*"},
	  {"Effect": "Allow", "Principal": {"AWS": ["arn:aws:iam::1:user/alice", "arn:aws:iam::1:user/bob"]},
	   "Action": ["s3:GetObject", "s3:PutObject"], "Resource": "arn:aws:s3:::examplebucket/home/${aws:username}/*"},
	  {"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": "arn:aws:s3:::examplebucket/*",
	   "Condition": {"NotIpAddress": {"aws:SourceIp": ["10.0.0.0/8", "192.168.0.0/16"]}}}]}`), ParseOptions{Bucket: bucket})
	if err != nil {
		b.Fatal(err)
	}
	r := &Request{Action: "s3:PutObject", Resource: obj("home/bob/reports/2026/q3.csv"), AccessKey: "bob",
		Conditions: map[string][]string{"aws:username": {"bob"}, "aws:sourceip": {"10.1.2.3"}}}
	if p.Evaluate(r) != Allowed {
		b.Fatal("want allowed")
	}
	b.ReportAllocs()
	for b.Loop() {
		p.Evaluate(r)
	}
}
