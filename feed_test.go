package memd_test

import (
	"testing"

	"github.com/memd/memd"
)

func TestParseFeedQuery(t *testing.T) {
	q, err := memd.ParseFeedQuery([]string{"agent/a", "project/p"}, []string{"agent/a:0123abcd", "project/p:fedcba98"})
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Shards) != 2 || q.Shards[1].String() != "project/p" {
		t.Errorf("shards = %v", q.Shards)
	}
	// The commit is what follows the colon.
	a, _ := memd.ParseShardID("agent/a")
	if q.Since[a] != "0123abcd" || len(q.Since) != 2 {
		t.Errorf("since = %v", q.Since)
	}
	for _, bad := range []struct{ shards, since []string }{
		{[]string{"nobody"}, nil},
		{nil, []string{"agent/a"}},
		{nil, []string{"agent/A:0123"}},
		// Two places to resume one shard from: which is meant?
		{nil, []string{"agent/a:0123abcd", "agent/a:fedcba98"}},
	} {
		if _, err := memd.ParseFeedQuery(bad.shards, bad.since); memd.ErrorCode(err) != memd.EINVALID {
			t.Errorf("ParseFeedQuery(%q, %q) = %v, want EINVALID", bad.shards, bad.since, err)
		}
	}
}
