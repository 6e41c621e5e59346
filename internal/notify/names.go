package notify

import "strings"

// Name is an event this server sends, by MinIO's name (which AWS shares
// for the object created and removed events).
type Name string

// The events made. Tagging, retention and legal hold changes are
// ObjectCreated events in MinIO's naming; AWS names tagging changes
// s3:ObjectTagging:*, and a rule subscribing that spelling gets the
// event under it. Lifecycle expirations are s3:LifecycleExpiration:*
// as AWS names them, and also match s3:ObjectRemoved:* rules (MinIO
// sends them as removals).
const (
	ObjectCreatedPut           Name = "s3:ObjectCreated:Put"
	ObjectCreatedPost          Name = "s3:ObjectCreated:Post"
	ObjectCreatedCopy          Name = "s3:ObjectCreated:Copy"
	ObjectCreatedCompleteMPU   Name = "s3:ObjectCreated:CompleteMultipartUpload"
	ObjectCreatedPutTagging    Name = "s3:ObjectCreated:PutTagging"
	ObjectCreatedDeleteTagging Name = "s3:ObjectCreated:DeleteTagging"
	ObjectCreatedPutRetention  Name = "s3:ObjectCreated:PutRetention"
	ObjectCreatedPutLegalHold  Name = "s3:ObjectCreated:PutLegalHold"
	ObjectRemovedDelete        Name = "s3:ObjectRemoved:Delete"
	ObjectRemovedDeleteMarker  Name = "s3:ObjectRemoved:DeleteMarkerCreated"
	LifecycleExpirationDelete  Name = "s3:LifecycleExpiration:Delete"
	LifecycleExpirationMarker  Name = "s3:LifecycleExpiration:DeleteMarkerCreated"
	// MinIO's read events (AWS has none): a GET or HEAD of an object,
	// a GetObjectRetention, GetObjectLegalHold or GetObjectAttributes,
	// answered 2xx. Queued before the answer like every event, so a
	// rule on them costs each read a group-committed sync.
	ObjectAccessedGet          Name = "s3:ObjectAccessed:Get"
	ObjectAccessedHead         Name = "s3:ObjectAccessed:Head"
	ObjectAccessedGetRetention Name = "s3:ObjectAccessed:GetRetention"
	ObjectAccessedGetLegalHold Name = "s3:ObjectAccessed:GetLegalHold"
	ObjectAccessedAttributes   Name = "s3:ObjectAccessed:Attributes"
)

type nameInfo struct {
	// aliases are other spellings a rule may subscribe the event by;
	// the event is sent under the one that matched.
	aliases []string
}

var names = map[Name]nameInfo{
	ObjectCreatedPut:           {},
	ObjectCreatedPost:          {},
	ObjectCreatedCopy:          {},
	ObjectCreatedCompleteMPU:   {},
	ObjectCreatedPutTagging:    {aliases: []string{"s3:ObjectTagging:Put"}},
	ObjectCreatedDeleteTagging: {aliases: []string{"s3:ObjectTagging:Delete"}},
	ObjectCreatedPutRetention:  {aliases: []string{"s3:ObjectRetention:Put"}},
	ObjectCreatedPutLegalHold:  {aliases: []string{"s3:ObjectLegalHold:Put"}},
	ObjectRemovedDelete:        {},
	ObjectRemovedDeleteMarker:  {},
	LifecycleExpirationDelete:  {aliases: []string{string(ObjectRemovedDelete)}},
	LifecycleExpirationMarker:  {aliases: []string{string(ObjectRemovedDeleteMarker)}},
	ObjectAccessedGet:          {},
	ObjectAccessedHead:         {},
	ObjectAccessedGetRetention: {},
	ObjectAccessedGetLegalHold: {},
	ObjectAccessedAttributes:   {},
}

// acceptedOnly are names a configuration may subscribe though this
// server never makes the event (it has no restore from an archive
// tier): accepted so that MinIO's and AWS's documents are taken as
// they are.
var acceptedOnly = []string{
	"s3:ObjectRestore:Post", "s3:ObjectRestore:Completed", "s3:ObjectRestore:Delete",
}

// eventNames is every full name a pattern may match.
var eventNames = func() []string {
	var out []string
	for n, info := range names {
		out = append(out, string(n))
		out = append(out, info.aliases...)
	}
	return append(out, acceptedOnly...)
}()

// validPattern: a full event name, or a family with ":*" that holds at
// least one.
func validPattern(p string) bool {
	if p == "s3:*" {
		return false
	}
	for _, n := range eventNames {
		if patternMatches(p, n) {
			return true
		}
	}
	return false
}

// patternMatches: p is n, or p is "family:*" and n is of that family.
func patternMatches(p, n string) bool {
	if fam, ok := strings.CutSuffix(p, ":*"); ok {
		return strings.HasPrefix(n, fam+":") && strings.Count(fam, ":") == 1
	}
	return p == n
}
