package odb

import (
	"container/list"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// Cache keeps recently read objects, bounded by their total size. One cache
// may serve every repository of a store: object IDs name content.
type Cache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List
	items map[plumbing.Hash]*list.Element
}

type cached struct {
	id  plumbing.Hash
	obj Object
}

// NewCache returns a cache holding up to maxBytes of object content.
func NewCache(maxBytes int) *Cache {
	return &Cache{max: maxBytes, order: list.New(), items: make(map[plumbing.Hash]*list.Element)}
}

func (c *Cache) get(id plumbing.Hash) (Object, bool) {
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
	return e.Value.(*cached).obj, true
}

func (c *Cache) put(id plumbing.Hash, obj Object) {
	if c == nil || len(obj.Data) > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[id]; ok {
		return
	}
	c.items[id] = c.order.PushFront(&cached{id, obj})
	c.size += len(obj.Data) + 64
	for c.size > c.max {
		e := c.order.Back()
		v := e.Value.(*cached)
		c.order.Remove(e)
		delete(c.items, v.id)
		c.size -= len(v.obj.Data) + 64
	}
}
