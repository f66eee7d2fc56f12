package daemon_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/memdtest"
	"github.com/memd/memd/learn"
)

// growProfile gives an agent's profile about size bytes of facts, as a
// long-lived agent's grows: a write to it needs room for its pack, which
// carries a compressed copy of the profile (see gitstore/packbase.go),
// about half of it for texts holding digests.
func growProfile(t *testing.T, e *env, agent string, size int) {
	t.Helper()
	sh, err := e.d.Store.Shard(memd.AgentShard(agent))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := memd.ParseDate("2026-10-01")
	var edits []gitstore.Edit
	for i := range size / 60 {
		text := fmt.Sprintf("Profile fact %x of a long-lived agent", sha256.Sum256(fmt.Appendf(nil, "%d", i)))
		edits = append(edits, gitstore.Edit{Op: gitstore.AddFact, Fact: memd.Fact{Text: text[:48], Date: d, Tier: memd.TierProfile}})
	}
	if _, err := sh.Apply(gitstore.Change{Author: gitstore.Signature{Name: "t", Email: "t@x"}, Message: "grow", Edits: edits}); err != nil {
		t.Fatal(err)
	}
}

// An exchange accepted while the disk had room is learned while it is
// full: the model's answer is kept, its fact finds no room. The exchange
// waits, however long, and is learned once there is room, with no
// person's retry: a full disk does not use up its tries.
func TestLearner_WaitsOutAFullDisk(t *testing.T) {
	dir := memdtest.SmallDisk(t, "16m")
	filled := make(chan struct{})
	m := newModelServer(t, func(modelRequest) (int, string) {
		<-filled
		return http.StatusOK, "profile: Prefers window seats on long flights"
	})
	e := startQuietIn(t, dir, daemon.Config{Model: &learn.ModelConfig{BaseURL: m.URL + "/v1", Model: "scripted-model"}, LearnRetryBase: time.Millisecond})
	ctx := context.Background()
	alice := e.agent(t, "alice")
	growProfile(t, e, "alice", 256<<10)
	if _, err := alice.Learn(ctx, exchange("alice", "c1", memd.ChatDirect, "", "I always want a window seat on long flights", "Noted.")); err != nil {
		t.Fatal(err)
	}
	free := memdtest.LeaveFree(t, dir, 64<<10)
	close(filled)
	// Far more than five tries' worth of the backoff (1, 2, 4, 8 ms).
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		list, _ := e.admin.Exchanges(ctx, "")
		if len(list) != 1 || list[0].State != memd.ExchangePending {
			t.Fatalf("while the disk is full the exchange is %+v, want it pending", list)
		}
	}
	free()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		facts, err := e.admin.Facts(ctx, memd.FactsQuery{Shard: memd.AgentShard("alice"), Text: "window seats"})
		if err == nil && len(facts.Facts) == 1 {
			break
		}
		if time.Now().After(deadline) {
			list, _ := e.admin.Exchanges(ctx, "")
			t.Fatalf("the exchange is not learned once the disk has room again: %v %+v", err, list)
		}
	}
}

// The disk fills between the model's answer and storing it: the answer
// is lost, and the exchange is tried again, but not at once: asked again
// as fast as it answers, a paid model would bill for each try, and a
// rate-limited one stop every agent's learning.
func TestLearner_AsksTheModelOnceWhileTheDiskIsFull(t *testing.T) {
	dir := memdtest.SmallDisk(t, "16m")
	var calls atomic.Int32
	filled := make(chan struct{})
	m := newModelServer(t, func(modelRequest) (int, string) {
		<-filled
		calls.Add(1)
		return http.StatusOK, "profile: Prefers window seats on long flights"
	})
	e := startQuietIn(t, dir, daemon.Config{Model: &learn.ModelConfig{BaseURL: m.URL + "/v1", Model: "scripted-model"}}) // memd serve's backoff
	alice := e.agent(t, "alice")
	// A long exchange: its answer does not fit in what is left of the
	// last page of the queue's file.
	long := strings.Repeat("I always want a window seat on long flights. ", 200)
	if _, err := alice.Learn(context.Background(), exchange("alice", "c1", memd.ChatDirect, "", long, "Noted.")); err != nil {
		t.Fatal(err)
	}
	free := memdtest.FillDisk(t, dir)
	defer free()
	close(filled)
	for calls.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(time.Second) // a window in which a loop would ask thousands of times
	if n := calls.Load(); n != 1 {
		t.Errorf("the model was asked %d times in a second while the disk was full, for one exchange", n)
	}
}
