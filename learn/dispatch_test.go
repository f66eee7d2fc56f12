package learn

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/memd/memd"
)

// An exchange a worker finishes while the learner reads its queue is not
// started again: a second model call for it, and a second "learned".
func TestDispatch_AJobFinishedMeanwhileIsNotStartedAgain(t *testing.T) {
	release := make(chan struct{})
	var calls, done atomic.Int32
	model := modelFunc(func(context.Context, string, string) (string, error) {
		calls.Add(1)
		<-release
		return "NONE", nil
	})
	var l *Learner
	armed := false
	l, err := Open(t.TempDir()+"/learner.db", Config{Model: model, Memory: noMemory{}, Workers: 2, Hooks: Hooks{
		Done: func(memd.ExchangeStatus) { done.Add(1) },
		// Between reading the queue and starting its jobs, the running
		// job finishes.
		Queue: func(int) {
			if armed {
				armed = false
				close(release)
				l.running.Wait()
			}
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Accept(memd.Exchange{Agent: "alice", Chat: "c1", ChatKind: memd.ChatDirect,
		Messages: []memd.Message{{ID: "m1", Role: "user", Text: "I moved to Lisbon last week"}}}); err != nil {
		t.Fatal(err)
	}
	l.dispatch(t.Context()) // alice's job starts; its model call waits
	armed = true
	l.dispatch(t.Context())
	l.running.Wait()
	if calls.Load() != 1 || done.Load() != 1 {
		t.Errorf("the model was called %d times and the job done %d times, want once each", calls.Load(), done.Load())
	}
}

// modelFunc is a model answering from a function: the one fake allowed.
type modelFunc func(ctx context.Context, system, user string) (string, error)

func (modelFunc) Name() string { return "scripted" }
func (f modelFunc) Complete(ctx context.Context, system, user string) (string, error) {
	return f(ctx, system, user)
}

// noMemory is a memory holding nothing, for a model that learns nothing.
type noMemory struct{}

func (noMemory) Known(context.Context, memd.Exchange) ([]memd.Fact, error) { return nil, nil }
func (noMemory) Add(context.Context, string, memd.ShardID, memd.Fact, memd.Provenance) (string, error) {
	return "", errors.New("nothing is added here")
}
func (noMemory) Remove(context.Context, string, memd.ShardID, string, memd.Provenance) (string, error) {
	return "", errors.New("nothing is removed here")
}
