package odb

import (
	"container/list"
	"sync"
	"time"
)

// Cache keeps recently read objects, bounded by their total size. One cache
// may serve every repository of a store: object IDs name content.
type Cache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List
	items map[Hash]*list.Element
	now   func() time.Time
}

type cached struct {
	id   Hash
	obj  Object
	used time.Time
}

// NewCache returns a cache holding up to maxBytes of object content.
func NewCache(maxBytes int) *Cache {
	return &Cache{max: maxBytes, order: list.New(), items: make(map[Hash]*list.Element), now: time.Now}
}

func (c *Cache) get(id Hash) (Object, bool) {
	if c == nil {
		return Object{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[id]
	if !ok {
		return Object{}, false
	}
	c.order.MoveToFront(e)
	v := e.Value.(*cached)
	v.used = c.now()
	return v.obj, true
}

func (c *Cache) put(id Hash, obj Object) {
	if c == nil || len(obj.Data) > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[id]; ok {
		return
	}
	c.items[id] = c.order.PushFront(&cached{id, obj, c.now()})
	c.size += len(obj.Data) + 64
	for c.size > c.max {
		c.evict(c.order.Back())
	}
}

func (c *Cache) evict(e *list.Element) {
	v := e.Value.(*cached)
	c.order.Remove(e)
	delete(c.items, v.id)
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
