package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// settleAhead waits until no listing page is being made ahead.
func settleAhead(t *testing.T, e *Engine) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		e.ahead.mu.Lock()
		running := e.ahead.running
		e.ahead.mu.Unlock()
		if running == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a listing page made ahead did not finish")
		}
		time.Sleep(time.Millisecond)
	}
}

// listKeys lists bucket page by page with read-ahead, waiting after
// each page for the next one to be made ahead, and returns the keys and
// common prefixes.
func listKeys(t *testing.T, e *Engine, bucket string, opts ListOptions) (keys, prefixes []string) {
	t.Helper()
	opts.ReadAhead = true
	return listPages(t, e, bucket, opts, func() { settleAhead(t, e) })
}

// listAll lists "bucket" page by page without read-ahead.
func listAll(t *testing.T, e *Engine, opts ListOptions) (keys, prefixes []string) {
	t.Helper()
	return listPages(t, e, "bucket", opts, func() {})
}

func listPages(t *testing.T, e *Engine, bucket string, opts ListOptions, between func()) (keys, prefixes []string) {
	t.Helper()
	for {
		res, err := e.ListObjects(context.Background(), bucket, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range res.Objects {
			keys = append(keys, o.Key)
		}
		prefixes = append(prefixes, res.CommonPrefixes...)
		if !res.IsTruncated {
			return keys, prefixes
		}
		between()
		opts.After = res.NextAfter
	}
}

// Pages made ahead answer the listing's next requests with what a
// listing without read-ahead answers, for every page size, prefix and
// delimiter.
func TestListReadAheadAnswersLikeAListing(t *testing.T) {
	e, _ := testEngine(t, 8, Config{})
	ctx := context.Background()
	var keys []string
	for i := range 40 {
		keys = append(keys, fmt.Sprintf("k%02d", i), fmt.Sprintf("d%d/x%02d", i%3, i))
	}
	for _, k := range keys {
		if _, err := e.PutObject(ctx, "bucket", k, strings.NewReader("v"), 1, PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before := e.ListAheadStats()
	for _, opts := range []ListOptions{{MaxKeys: 1}, {MaxKeys: 7}, {Delimiter: "/", MaxKeys: 2}, {Prefix: "d1/", MaxKeys: 3}, {Prefix: "k", MaxKeys: 10}} {
		gotKeys, gotPrefixes := listKeys(t, e, "bucket", opts)
		wantKeys, wantPrefixes := listAll(t, e, opts)
		if !slices.Equal(gotKeys, wantKeys) || !slices.Equal(gotPrefixes, wantPrefixes) {
			t.Fatalf("%+v: read-ahead listed %v %v, a plain listing %v %v", opts, gotKeys, gotPrefixes, wantKeys, wantPrefixes)
		}
	}
	st := e.ListAheadStats()
	if st.Used-before.Used < 80 || st.Stale != before.Stale || st.Started-before.Started != st.Used-before.Used {
		t.Fatalf("read-ahead did not answer the pages: %+v (before %+v)", st, before)
	}
}

// A write acknowledged after the next page was made ahead, before the
// request for it, shows in that page: the page made ahead is stale and
// the request lists again.
func TestListReadAheadSeesLaterWrites(t *testing.T) {
	e, _ := testEngine(t, 8, Config{})
	ctx := context.Background()
	for i := range 30 {
		if _, err := e.PutObject(ctx, "bucket", fmt.Sprintf("k%02d", i), strings.NewReader("v"), 1, PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.MakeBucket(ctx, "other", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	type step struct {
		name   string
		change func() error
		check  func(res ListResult) string
	}
	keysOf := func(res ListResult) string {
		var ks []string
		for _, o := range res.Objects {
			ks = append(ks, fmt.Sprintf("%s:%d", o.Key, o.Size))
		}
		return strings.Join(ks, ",")
	}
	steps := []step{
		{"a new key", func() error {
			_, err := e.PutObject(ctx, "bucket", "k15x", strings.NewReader("new"), 3, PutOptions{})
			return err
		}, func(res ListResult) string {
			if !strings.Contains(keysOf(res), "k15x:3") {
				return "k15x missing"
			}
			return ""
		}},
		{"an overwrite", func() error {
			_, err := e.PutObject(ctx, "bucket", "k12", strings.NewReader("longer"), 6, PutOptions{})
			return err
		}, func(res ListResult) string {
			if !strings.Contains(keysOf(res), "k12:6") {
				return "k12 not overwritten"
			}
			return ""
		}},
		{"a delete", func() error { return e.DeleteObject(ctx, "bucket", "k13") }, func(res ListResult) string {
			if strings.Contains(keysOf(res), "k13:") {
				return "deleted k13 listed"
			}
			return ""
		}},
	}
	for _, s := range steps {
		res, err := e.ListObjects(ctx, "bucket", ListOptions{MaxKeys: 10, ReadAhead: true})
		if err != nil || !res.IsTruncated {
			t.Fatal(res, err)
		}
		settleAhead(t, e)
		// A write to another bucket does not make the page stale.
		if _, err := e.PutObject(ctx, "other", "k14", strings.NewReader("v"), 1, PutOptions{}); err != nil {
			t.Fatal(err)
		}
		before := e.ListAheadStats()
		if err := s.change(); err != nil {
			t.Fatal(err)
		}
		res, err = e.ListObjects(ctx, "bucket", ListOptions{MaxKeys: 10, After: res.NextAfter, ReadAhead: true})
		if err != nil {
			t.Fatal(err)
		}
		if msg := s.check(res); msg != "" {
			t.Fatalf("%s after the page was made ahead: %s in %s", s.name, msg, keysOf(res))
		}
		if st := e.ListAheadStats(); st.Stale != before.Stale+1 || st.Used != before.Used {
			t.Fatalf("%s: the page made ahead was not dropped as stale: %+v (before %+v)", s.name, st, before)
		}
		settleAhead(t, e)
	}
	// Without a change in between, the page made ahead answers, also
	// after writes to another bucket.
	res, err := e.ListObjects(ctx, "bucket", ListOptions{MaxKeys: 10, ReadAhead: true})
	if err != nil {
		t.Fatal(err)
	}
	settleAhead(t, e)
	if _, err := e.PutObject(ctx, "other", "k14", strings.NewReader("v"), 1, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	before := e.ListAheadStats()
	if _, err := e.ListObjects(ctx, "bucket", ListOptions{MaxKeys: 10, After: res.NextAfter, ReadAhead: true}); err != nil {
		t.Fatal(err)
	}
	if st := e.ListAheadStats(); st.Used != before.Used+1 {
		t.Fatalf("the page made ahead did not answer: %+v (before %+v)", st, before)
	}
}

// Drives that cannot count their changes (here: wrapped so the engine
// does not see a drive.ChangeCounter, as a cluster's remote drives)
// turn read-ahead off.
func TestListReadAheadNeedsChangeCounts(t *testing.T) {
	e, _ := scanCountingEngine(t)
	ctx := context.Background()
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := e.PutObject(ctx, "bucket", fmt.Sprintf("k%d", i), strings.NewReader("v"), 1, PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	keys, _ := listKeys(t, e, "bucket", ListOptions{MaxKeys: 2})
	if len(keys) != 5 {
		t.Fatalf("listed %v", keys)
	}
	if st := e.ListAheadStats(); st.Started != 0 {
		t.Fatalf("pages made ahead without change counts: %+v", st)
	}
}

// Pages nobody asks for are dropped once they are old, so new listings
// can read ahead again; the number kept is bounded.
func TestListReadAheadBounded(t *testing.T) {
	e, _ := testEngine(t, 8, Config{})
	ctx := context.Background()
	for i := range 3 {
		if _, err := e.PutObject(ctx, "bucket", fmt.Sprintf("k%d", i), strings.NewReader("v"), 1, PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// 2*aheadPages listings that stop after their first page.
	for i := range 2 * aheadPages {
		if _, err := e.ListObjects(ctx, "bucket", ListOptions{MaxKeys: 1, Delimiter: fmt.Sprintf("#%d", i), ReadAhead: true}); err != nil {
			t.Fatal(err)
		}
		settleAhead(t, e)
	}
	e.ahead.mu.Lock()
	kept := len(e.ahead.pages)
	for _, p := range e.ahead.pages {
		p.made = p.made.Add(-2 * aheadKeep)
	}
	e.ahead.mu.Unlock()
	if kept != aheadPages {
		t.Fatalf("%d pages kept, want the bound %d", kept, aheadPages)
	}
	before := e.ListAheadStats()
	if _, err := e.ListObjects(ctx, "bucket", ListOptions{MaxKeys: 1, ReadAhead: true}); err != nil {
		t.Fatal(err)
	}
	settleAhead(t, e)
	st := e.ListAheadStats()
	if st.Unused != before.Unused+aheadPages || st.Started != before.Started+1 {
		t.Fatalf("old pages not dropped for a new listing: %+v (before %+v)", st, before)
	}
}
