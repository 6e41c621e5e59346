package s3api

import (
	"strconv"
	"time"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
)

// Requests of service principals. Server access logging writes its log
// objects as the AWS service principal policy.LoggingService, and S3
// lets it in only where the target bucket says so: a bucket policy
// naming the service (usually with aws:SourceArn and aws:SourceAccount
// conditions on the source bucket) or a WRITE grant to the LogDelivery
// group. serviceWriteDecision asks access.Decide that question, so the
// logger decides through the one access decision as a request does.

// serviceWriteDecision decides whether service may write key into bucket
// bi on behalf of sourceBucket, owned by sourceOwner (an access key):
// s3:PutObject on arn:aws:s3:::<bi>/<key> by a service caller, with the
// condition keys S3 sets on such a request.
func (s *Server) serviceWriteDecision(bi engine.BucketInfo, key, service, sourceBucket, sourceOwner string) access.Decision {
	r := access.Request{Caller: access.ServiceCaller(service), Op: access.WriteObject, Action: "s3:PutObject",
		Resource: s.bucketResource(bi)}
	r.Resource.Key = key
	if r.NeedsConditions() {
		now := time.Now().UTC()
		r.Conditions = access.ServiceConditions(service, sourceBucket, sourceOwner)
		r.Conditions["aws:currenttime"] = []string{now.Format(time.RFC3339)}
		r.Conditions["aws:epochtime"] = []string{strconv.FormatInt(now.Unix(), 10)}
		r.Conditions["aws:securetransport"] = []string{"true"}
	}
	return access.Decide(r)
}
