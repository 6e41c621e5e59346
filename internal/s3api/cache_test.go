package s3api

import (
	"strconv"
	"testing"
)

func TestDocCache(t *testing.T) {
	var c docCache[int]
	parses := 0
	parse := func(v int) func() int { return func() int { parses++; return v } }
	if got := c.get("a", parse(1)); got != 1 || parses != 1 {
		t.Fatalf("first get: %d after %d parses", got, parses)
	}
	if got := c.get("a", parse(2)); got != 1 || parses != 1 {
		t.Fatalf("a hit parsed again or changed: %d after %d parses", got, parses)
	}
	for i := 0; i < maxCachedDocs; i++ {
		c.get(strconv.Itoa(i), parse(i))
	}
	if len(c.m) > maxCachedDocs {
		t.Fatalf("the cache holds %d entries, more than %d", len(c.m), maxCachedDocs)
	}
	if got := c.get("a", parse(3)); got != 3 {
		t.Fatalf("after starting over, a is parsed again: got %d", got)
	}
}
