package gitstore

import (
	"slices"
	"strings"
	"sync"

	"github.com/memd/memd"
)

// diffCache keeps the Diff of the commits memd made last, worked out from
// the file versions the writer held in memory, so that the feed, which
// describes every commit just after it is made, need not rebuild each one
// from git objects (two versions of a monthly log that may run to
// hundreds of KB). It holds the newest diffCacheSize commits of the store.
type diffCache struct {
	mu    sync.Mutex
	diffs map[commitKey]Diff
	ring  []commitKey
	next  int
}

// commitKey names a commit in a shard: two shards can hold the same commit
// (the same first fact, by the same author, in the same second), and a
// Diff names its shard.
type commitKey struct {
	shard memd.ShardID
	hash  Hash
}

const diffCacheSize = 8192

func newDiffCache() *diffCache {
	return &diffCache{diffs: make(map[commitKey]Diff), ring: make([]commitKey, diffCacheSize)}
}

func (c *diffCache) put(k commitKey, d Diff) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.ring[c.next]; !old.hash.IsZero() {
		delete(c.diffs, old)
	}
	c.ring[c.next] = k
	c.next = (c.next + 1) % len(c.ring)
	c.diffs[k] = d
}

// get returns a copy of a commit's Diff, if cached.
func (c *diffCache) get(k commitKey) (Diff, bool) {
	c.mu.Lock()
	d, ok := c.diffs[k]
	c.mu.Unlock()
	if !ok {
		return Diff{}, false
	}
	return Diff{Facts: slices.Clone(d.Facts), Files: slices.Clone(d.Files)}, true
}

// planDiff is the Diff of a planned commit, as diffTrees would find it in
// git: every path whose blob changed, in tree order, and the fact lines
// that differ between the versions.
func (g *group) planDiff(pl *plan) Diff {
	var d Diff
	var before, after []lineFact
	files := slices.Clone(pl.files)
	slices.SortFunc(files, func(a, b plannedFile) int { return treeOrder(a.next.path, b.next.path) })
	for _, f := range files {
		var old []byte
		if f.old != nil {
			if f.old.blob == f.next.blob {
				continue
			}
			old = f.old.data
		}
		d.Files = append(d.Files, f.next.path)
		before, after = appendChangedFacts(before, after, f.next.path, old, f.next.data)
	}
	for _, n := range pl.notes {
		d.Files = append(d.Files, n.path)
	}
	slices.SortFunc(d.Files, treeOrder)
	d.Facts = diffFacts(g.sh.id, before, after)
	return d
}

// treeOrder orders paths as a walk of git trees meets them: name by name.
func treeOrder(a, b string) int {
	for {
		an, arest, amore := strings.Cut(a, "/")
		bn, brest, bmore := strings.Cut(b, "/")
		if c := strings.Compare(an, bn); c != 0 || !amore || !bmore {
			if c == 0 {
				switch {
				case amore && !bmore:
					return 1
				case !amore && bmore:
					return -1
				}
			}
			return c
		}
		a, b = arest, brest
	}
}
