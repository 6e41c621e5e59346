package accesslog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"time"
)

// keyTime is the date and time in a log object's key.
const keyTime = "2006-01-02-15-04-05"

// group is the records of one segment that go into one log object: one
// source bucket's, for one destination and (for keys partitioned by
// event time) one day.
type group struct {
	dest    Destination
	day     string // yyyy/mm/dd of the events; "" unless partitioned by event time
	entries []Entry
}

// batchObjects turns a segment's entries into its log objects. Every
// part of the result follows from the segment's name and content alone
// (order, keys, bodies), so delivering a segment again after a crash
// writes the same objects under the same keys: an overwrite, never a
// duplicate.
func batchObjects(segment string, entries []Entry) []Object {
	groups := map[string]*group{}
	var order []string
	for _, e := range entries {
		day := ""
		if e.Dest.Partitioned && !e.Dest.DeliveryDate {
			day = e.Record.Time.UTC().Format("2006/01/02")
		}
		k := groupKey(e.Dest, day)
		g := groups[k]
		if g == nil {
			g = &group{dest: e.Dest, day: day}
			groups[k] = g
			order = append(order, k)
		}
		g.entries = append(g.entries, e)
	}
	sort.Strings(order)
	out := make([]Object, 0, len(order))
	for _, k := range order {
		g := groups[k]
		sort.Slice(g.entries, func(i, j int) bool {
			a, b := &g.entries[i].Record, &g.entries[j].Record
			if !a.Time.Equal(b.Time) {
				return a.Time.Before(b.Time)
			}
			return g.entries[i].id() < g.entries[j].id()
		})
		var body []byte
		for i := range g.entries {
			body = g.entries[i].Record.Line(body)
		}
		// The key's time is the batch's last record's: when the batch
		// was complete, the closest a replay can repeat to the time S3
		// would have delivered it.
		at := g.entries[len(g.entries)-1].Record.Time.UTC()
		sum := sha256.Sum256([]byte(segment + "\x00" + k))
		unique := strings.ToUpper(hex.EncodeToString(sum[:8]))
		out = append(out, Object{Dest: g.dest, Key: ObjectKey(g.dest, at, g.day, unique), Body: body, Records: len(g.entries)})
	}
	return out
}

// groupKey is a stable text form of a group's identity.
func groupKey(d Destination, day string) string {
	data, err := json.Marshal(d)
	if err != nil {
		panic(err) // plain strings and bools always marshal
	}
	return string(data) + "\x00" + day
}

// ObjectKey is a log object's key in its target bucket, in S3's simple
// form, TargetPrefix + YYYY-mm-DD-HH-MM-SS-UniqueString, or its
// partitioned form, TargetPrefix + SourceAccountId/SourceRegion/
// SourceBucket/YYYY/MM/DD/YYYY-mm-DD-HH-MM-SS-UniqueString, dated by
// eventDay (yyyy/mm/dd) when set, else by at.
func ObjectKey(d Destination, at time.Time, eventDay, unique string) string {
	name := at.UTC().Format(keyTime) + "-" + unique
	if !d.Partitioned {
		return d.TargetPrefix + name
	}
	day := eventDay
	if day == "" {
		day = at.UTC().Format("2006/01/02")
	}
	return d.TargetPrefix + d.SourceAccount + "/" + d.SourceRegion + "/" + d.SourceBucket + "/" + day + "/" + name
}
