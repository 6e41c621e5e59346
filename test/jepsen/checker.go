package jepsen

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Anomaly is one violation a checker found.
type Anomaly struct {
	Checker string `json:"checker"` // linearizable, versions, ...
	// Type is the kind of violation (for the report's counts).
	Type   string `json:"type"`
	Key    string `json:"key"`
	Detail string `json:"detail"`
	// Excerpt is the operations on the key (at most 60, those around the
	// problem), one per line.
	Excerpt []string `json:"excerpt,omitempty"`
	// At is when the anomalous operation was invoked (the listing; for
	// a key with no linearization, the first operation after its longest
	// linearizable prefix): the nemesis x workload table counts the
	// anomaly under the faults active then.
	At time.Duration `json:"at,omitempty"`
}

func (a Anomaly) String() string {
	s := fmt.Sprintf("%s anomaly on %s: %s", a.Checker, a.Key, a.Detail)
	if len(a.Excerpt) > 0 {
		s += "\n    " + strings.Join(a.Excerpt, "\n    ")
	}
	return s
}

// CheckStats counts what the checkers looked at.
type CheckStats struct {
	LinearKeys   int // keys whose history porcupine checked
	LinearOps    int // operations in those histories
	LinearUnsure int // keys porcupine gave up on (timeout): not counted as checked
	Listings     int // register listings checked
	ListedKeys   int // (listing, key) pairs judged
	VersionLists int // version listings checked
	VersionsSeen int // listed versions checked
}

// regInput and regOutput are the register model's operation.
type regInput struct {
	Kind  Kind
	Value string
	Match string
}

type regOutput struct {
	Outcome Outcome // Ok; Fail only with Refused; Unknown
	Value   string  // a read's value, "" = absent
}

// registerModel is a single S3 key as a register: its state is the
// current value, "" when the key is absent. Writes with an unknown
// outcome stay open to the end of the history (Return = +inf), so the
// checker may place them anywhere after their call, the end included,
// where they change nothing any operation saw: "took effect" and "never
// took effect" are both allowed, as Jepsen's checkers allow an
// indeterminate ("info") operation.
var registerModel = porcupine.Model{
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		st, in, out := state.(string), input.(regInput), output.(regOutput)
		switch in.Kind {
		case OpGet, OpList:
			return out.Value == st, st
		case OpPut:
			return true, in.Value
		case OpDelete:
			return true, ""
		case OpPutIfAbsent:
			holds := st == ""
			return condStep(holds, st, in.Value, out)
		case OpPutIfMatch:
			holds := st != "" && st == in.Match
			return condStep(holds, st, in.Value, out)
		}
		return false, st
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(regInput), output.(regOutput)
		switch in.Kind {
		case OpGet, OpList:
			return fmt.Sprintf("%s → %q", in.Kind, out.Value)
		case OpPutIfMatch:
			return fmt.Sprintf("%s %q if %q → %s", in.Kind, in.Value, in.Match, out.Outcome)
		}
		return fmt.Sprintf("%s %q → %s", in.Kind, in.Value, out.Outcome)
	},
	DescribeState: func(state any) string { return fmt.Sprintf("%q", state) },
}

// condStep is a conditional write: ok needs the condition to hold,
// a refusal needs it not to, an unknown outcome applies it if it holds.
func condStep(holds bool, st, v string, out regOutput) (bool, any) {
	switch out.Outcome {
	case Ok:
		if holds {
			return true, v
		}
		return false, st
	case Fail:
		return !holds, st
	default:
		if holds {
			return true, v
		}
		return true, st
	}
}

// registerOps projects the history onto each key: reads (GETs, and with
// withLists each listing's view of every key under its prefix), writes,
// refused conditional writes. Failed reads and writes that certainly did
// not happen are left out; unknown writes stay open to +inf.
func registerOps(ops []Op, keysOf func(prefix string) []string, withLists bool) map[string][]porcupine.Operation {
	out := map[string][]porcupine.Operation{}
	add := func(key string, o Op, in regInput, res regOutput) {
		ret := int64(o.Return)
		if res.Outcome == Unknown {
			ret = math.MaxInt64
		}
		out[key] = append(out[key], porcupine.Operation{ClientId: o.Client, Input: in, Call: int64(o.Call), Output: res, Return: ret, Metadata: o.String()})
	}
	for _, o := range ops {
		switch o.Kind {
		case OpGet, OpMPGet:
			if o.Outcome == Ok {
				add(o.Key, o, regInput{Kind: OpGet}, regOutput{Outcome: Ok, Value: o.Value})
			}
		case OpMPComplete:
			// A completed multipart upload writes its value as a PUT does.
			if o.Outcome != Fail {
				add(o.Key, o, regInput{Kind: OpPut, Value: o.Value}, regOutput{Outcome: o.Outcome})
			}
		case OpList:
			if o.Outcome != Ok || !withLists {
				continue
			}
			for _, k := range keysOf(o.Key) {
				add(k, o, regInput{Kind: OpList}, regOutput{Outcome: Ok, Value: o.Listed[k]})
			}
		case OpPut, OpDelete, OpPutIfAbsent, OpPutIfMatch:
			if o.Outcome == Fail && !o.Refused {
				continue
			}
			add(o.Key, o, regInput{Kind: o.Kind, Value: o.Value, Match: o.Match}, regOutput{Outcome: o.Outcome})
		}
	}
	return out
}

// CheckLinearizable checks every key's history of GETs and writes
// against registerModel with porcupine, each key for at most perKey.
// Listings are not part of it: shardstore promises list-after-write,
// not linearizable listings (docs/consistency.md); CheckListAfterWrite
// checks them, and withLists (a test's choice) puts them in anyway.
func CheckLinearizable(ops []Op, keysOf func(prefix string) []string, perKey time.Duration, withLists bool, st *CheckStats) []Anomaly {
	var anomalies []Anomaly
	byKey := registerOps(ops, keysOf, withLists)
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h := byKey[k]
		res, info := porcupine.CheckOperationsVerbose(registerModel, h, perKey)
		switch res {
		case porcupine.Unknown:
			st.LinearUnsure++
			continue
		case porcupine.Illegal:
			ex, at := excerpt(h, info)
			anomalies = append(anomalies, Anomaly{Checker: "linearizable", Type: "nonlinearizable", Key: k,
				Detail:  fmt.Sprintf("no linearization of its %d operations; %s", len(h), longestPrefix(info)),
				Excerpt: ex, At: at})
		}
		st.LinearKeys++
		st.LinearOps += len(h)
	}
	return anomalies
}

// longestPrefix describes how far the longest partial linearization got.
func longestPrefix(info porcupine.LinearizationInfo) string {
	best := []int(nil)
	for _, part := range info.PartialLinearizations() {
		for _, lin := range part {
			if len(lin) > len(best) {
				best = lin
			}
		}
	}
	return fmt.Sprintf("the longest linearizable prefix has %d operations", len(best))
}

// excerpt lists the key's operations in call order, at most 60: the
// ones after the longest linearizable prefix's last call, and a few
// before; and the call of the first operation after that prefix.
func excerpt(h []porcupine.Operation, info porcupine.LinearizationInfo) ([]string, time.Duration) {
	ops := append([]porcupine.Operation(nil), h...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	var lines []string
	for _, o := range ops {
		lines = append(lines, o.Metadata.(string))
	}
	// Where the longest partial linearization stopped.
	stop := 0
	for _, part := range info.PartialLinearizationsOperations() {
		for _, lin := range part {
			for _, o := range lin {
				for i := range ops {
					if ops[i].Call == o.Call && ops[i].ClientId == o.ClientId && i > stop {
						stop = i
					}
				}
			}
		}
	}
	from := max(0, stop-30)
	to := min(len(lines), from+60)
	var at time.Duration
	if len(ops) > 0 {
		at = time.Duration(ops[min(stop+1, len(ops)-1)].Call)
	}
	return lines[from:to], at
}

// CheckVersions checks the versioned bucket's history: in every
// successful listing, per key, (1) no version id twice and no write
// under two ids (duplicates) within one response page (a listing of
// several pages is no snapshot: a version replaced between two pages
// may show on both), (2) every listed version's ETag is that of
// a write made to that key (no phantoms), (3) an acknowledged vput's
// version carries the id its answer named, (4) every vput acknowledged
// before the listing was invoked is listed (no acknowledged version
// lost), (5) the order, newest first, respects real time within a
// page: a vput invoked after another was acknowledged lists as newer,
// and (6) only the first version of the key on a page may be flagged
// latest (a "stale-latest" is a replaced version listed as the current
// one above others).
func CheckVersions(ops []Op, st *CheckStats) []Anomaly {
	var anomalies []Anomaly
	puts := map[string]map[string]Op{} // key → value → its vput
	for _, o := range ops {
		if o.Kind == OpVPut {
			if puts[o.Key] == nil {
				puts[o.Key] = map[string]Op{}
			}
			puts[o.Key][o.Value] = o
		}
	}
	report := func(typ, key, detail string, lst Op, involved ...Op) {
		ex := []string{lst.String() + " " + key + ":"}
		for i, v := range lst.Versions[key] {
			if i == 12 {
				ex = append(ex, fmt.Sprintf("  … %d more", len(lst.Versions[key])-i))
				break
			}
			ex = append(ex, fmt.Sprintf("  %s %s latest=%v", v.VersionID, v.Value, v.Latest))
		}
		for _, o := range involved {
			ex = append(ex, o.String())
		}
		anomalies = append(anomalies, Anomaly{Checker: "versions", Type: typ, Key: key, Detail: detail, Excerpt: ex, At: lst.Call})
	}
	for _, l := range ops {
		if l.Kind != OpVList || l.Outcome != Ok {
			continue
		}
		st.VersionLists++
		for key, vs := range l.Versions {
			// By page: one answer must not list a version twice, but a
			// listing of several pages is no snapshot.
			seenID, seenVal := map[string]int{}, map[string]int{}
			for i, v := range vs {
				st.VersionsSeen++
				if pg, ok := seenID[v.VersionID]; ok && pg == v.Page {
					report("duplicate-id", key, fmt.Sprintf("version id %s listed twice", v.VersionID), l)
				}
				if pg, ok := seenVal[v.Value]; ok && pg == v.Page {
					report("duplicate-write", key, fmt.Sprintf("the write of %q listed as two versions", v.Value), l)
				}
				seenID[v.VersionID], seenVal[v.Value] = v.Page, v.Page
				if v.Latest && i > 0 && vs[i-1].Page == v.Page {
					report("stale-latest", key, fmt.Sprintf("version %s (%q) flagged latest below another version of the key", v.VersionID, v.Value), l)
				}
				p, ok := puts[key][v.Value]
				if !ok || p.Call > l.Return {
					report("phantom", key, fmt.Sprintf("phantom version %s (%s): no write of it to this key before the listing ended", v.VersionID, v.Value), l)
					continue
				}
				if p.Outcome == Ok && p.VersionID != v.VersionID {
					report("id-mismatch", key, fmt.Sprintf("the write of %q was acknowledged as version %s but lists as %s", v.Value, p.VersionID, v.VersionID), l, p)
				}
			}
		}
		// Lost and order, over every key with acknowledged writes.
		for key, byVal := range puts {
			if !strings.HasPrefix(key, l.Key) {
				continue
			}
			pos, page := map[string]int{}, map[string]int{}
			for i, v := range l.Versions[key] {
				pos[v.Value], page[v.Value] = i, v.Page
			}
			var acked []Op
			for _, p := range byVal {
				if p.Outcome == Ok {
					acked = append(acked, p)
				}
			}
			sort.Slice(acked, func(i, j int) bool { return acked[i].Call < acked[j].Call })
			for _, p := range acked {
				if p.Return < l.Call {
					if _, ok := pos[p.Value]; !ok {
						report("lost", key, fmt.Sprintf("acknowledged version %s (%q) missing from a listing invoked after it", p.VersionID, p.Value), l, p)
					}
				}
			}
			for _, a := range acked {
				for _, b := range acked {
					if a.Return < b.Call {
						pa, okA := pos[a.Value]
						pb, okB := pos[b.Value]
						if okA && okB && pb > pa && page[a.Value] == page[b.Value] {
							report("order", key, fmt.Sprintf("version order: %q (acknowledged first) lists as newer than %q (written after)", a.Value, b.Value), l, a, b)
						}
					}
				}
			}
		}
	}
	return anomalies
}

// CheckListAfterWrite checks every successful listing of the register
// keys, per key under its prefix, against the writes around it: the
// key's last write acknowledged before the listing was invoked (w), and
// every write that may still have been taking effect meanwhile (invoked
// before the listing returned, and acknowledged after w was invoked, or
// with an unknown outcome). The listing must show one of their values
// (absent for a delete): showing an older one is "stale" (a
// listing that missed an acknowledged write or delete), showing a value
// no write to that key had by then is "phantom". Keys with no
// acknowledged write before the listing are not judged.
func CheckListAfterWrite(ops []Op, keysOf func(prefix string) []string, st *CheckStats) []Anomaly {
	writes := map[string][]Op{}
	for _, o := range ops {
		switch o.Kind {
		case OpPut, OpDelete, OpPutIfAbsent, OpPutIfMatch:
			if o.Outcome == Ok || o.Outcome == Unknown {
				writes[o.Key] = append(writes[o.Key], o)
			}
		}
	}
	value := func(w Op) string {
		if w.Kind == OpDelete {
			return ""
		}
		return w.Value
	}
	var anomalies []Anomaly
	for _, l := range ops {
		if l.Kind != OpList || l.Outcome != Ok {
			continue
		}
		st.Listings++
		for _, k := range keysOf(l.Key) {
			got := l.Listed[k]
			var last *Op
			for i, w := range writes[k] {
				if w.Outcome == Ok && w.Return < l.Call && (last == nil || w.Return > last.Return) {
					last = &writes[k][i]
				}
			}
			if last == nil {
				continue
			}
			st.ListedKeys++
			ok := got == value(*last)
			written := false
			for _, w := range writes[k] {
				if w.Call <= l.Return && (w.Outcome == Unknown || w.Return >= last.Call) && value(w) == got {
					ok = true
				}
				if w.Call <= l.Return && value(w) == got {
					written = true
				}
			}
			if ok {
				continue
			}
			typ, detail := "stale", fmt.Sprintf("listed %q, but %s %q was acknowledged before the listing began", got, last.Kind, value(*last))
			if !written && got != "" {
				typ, detail = "phantom", fmt.Sprintf("listed %q, which no write to this key had", got)
			}
			ex := []string{l.String() + fmt.Sprintf(" shows %s=%q", k, got)}
			for _, w := range writes[k] {
				if w.Return >= last.Call-time.Second && w.Call <= l.Return+time.Second {
					ex = append(ex, w.String())
				}
			}
			anomalies = append(anomalies, Anomaly{Checker: "list-after-write", Type: typ, Key: k, Detail: detail, Excerpt: ex, At: l.Call})
		}
	}
	return anomalies
}
