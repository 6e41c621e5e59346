package s3api

import "sync"

// docCache remembers what stored documents (bucket policies, lifecycle
// configurations, explicit ACL grant lists) parse to, keyed by their
// text, so requests never parse JSON or XML: a changed document is parsed
// once and an unchanged one never again. Past maxCachedDocs entries it
// starts over, which bounds its memory. The zero value is ready to use.
type docCache[V any] struct {
	mu sync.RWMutex
	m  map[string]V
}

// maxCachedDocs bounds each docCache.
const maxCachedDocs = 4096

// get returns the cached value for key, calling parse on a miss.
func (c *docCache[V]) get(key string, parse func() V) V {
	c.mu.RLock()
	v, ok := c.m[key]
	c.mu.RUnlock()
	if ok {
		return v
	}
	v = parse()
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedDocs {
		c.m = map[string]V{}
	}
	c.m[key] = v
	c.mu.Unlock()
	return v
}
