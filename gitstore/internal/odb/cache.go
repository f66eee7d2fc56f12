package odb

import (
	"container/list"
	"sync"
	"sync/atomic"
	"time"
)

// Cache keeps recently read objects, bounded by their total size. One cache
// serves every repository of a store, each its own objects alone: an
// object ID names content, but that a repository holds an object is what
// lets a caller who may read that repository read it. Served from one
// cache for all, a commit of one shard could be read through another's
// name by anyone who knew its hash.
type Cache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List
	items map[cacheKey]*list.Element
	now   func() time.Time
}

// cacheKey names an object as one repository holds it.
type cacheKey struct {
	repo uint64
	id   Hash
}

type cached struct {
	key  cacheKey
	obj  Object
	used time.Time
}

// NewCache returns a cache holding up to maxBytes of object content.
func NewCache(maxBytes int) *Cache {
	return &Cache{max: maxBytes, order: list.New(), items: make(map[cacheKey]*list.Element), now: time.Now}
}

// repos numbers the databases opened, for their keys in a Cache.
var repos atomic.Uint64

// scope is a Cache as one repository sees it.
type scope struct {
	c    *Cache
	repo uint64
}

func (s scope) get(id Hash) (Object, bool) { return s.c.get(cacheKey{s.repo, id}) }
func (s scope) put(id Hash, obj Object)    { s.c.put(cacheKey{s.repo, id}, obj) }

func (c *Cache) get(k cacheKey) (Object, bool) {
	if c == nil {
		return Object{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return Object{}, false
	}
	c.order.MoveToFront(e)
	v := e.Value.(*cached)
	v.used = c.now()
	return v.obj, true
}

func (c *Cache) put(k cacheKey, obj Object) {
	if c == nil || len(obj.Data) > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok {
		return
	}
	c.items[k] = c.order.PushFront(&cached{k, obj, c.now()})
	c.size += len(obj.Data) + 64
	for c.size > c.max {
		c.evict(c.order.Back())
	}
}

func (c *Cache) evict(e *list.Element) {
	v := e.Value.(*cached)
	c.order.Remove(e)
	delete(c.items, v.key)
	c.size -= len(v.obj.Data) + 64
}

// DropUnused gives up the objects not read since a time: a store gone
// quiet holds none of what it can read again from disk.
func (c *Cache) DropUnused(since time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.order.Back(); e != nil && e.Value.(*cached).used.Before(since); e = c.order.Back() {
		c.evict(e)
	}
}

// Size returns the bytes the cache holds, each object counted with its
// bookkeeping.
func (c *Cache) Size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}
