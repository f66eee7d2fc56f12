package daemon

import (
	"context"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/feed"
)

// Subscribe refuses: see memd.ScopedReader.
func (s *Service) Subscribe(context.Context, memd.FeedQuery) (memd.Subscription, error) {
	return nil, errNoRules
}

// SubscribeAs follows the shards f.Wants accepts.
func (s *Service) SubscribeAs(ctx context.Context, f memd.Following, q memd.FeedQuery) (memd.Subscription, error) {
	if f.Wants == nil {
		return nil, memd.Errorf(memd.EINVALID, "a subscription needs the shards it may follow")
	}
	since := make(map[memd.ShardID]feed.Since, len(q.Since))
	for id, rev := range q.Since {
		sh, err := s.shard(id)
		if err != nil {
			return nil, err
		}
		h, err := sh.Resolve(rev)
		if err != nil {
			return nil, err
		}
		_, notADate := memd.ParseDate(rev) // Resolve took it as a date, or as a commit
		since[id] = feed.Since{Commit: h, ByDate: notADate == nil}
	}
	sub, err := s.Feed.Subscribe(ctx, f.Agent, f.Wants, since)
	if err != nil {
		return nil, err
	}
	// Removing an agent cuts the subscribers registered by then; one that
	// registers after was authenticated before, and is cut here. Checked
	// once registered, so that the removal is seen by one side or the
	// other whatever the order.
	if _, ok := s.Registry.Agent(f.Agent); f.Agent != "" && !ok {
		s.Feed.Unsubscribe(sub)
		return nil, feed.ErrAgentRemoved
	}
	return &subscription{Subscriber: sub, hub: s.Feed}, nil
}

type subscription struct {
	*feed.Subscriber
	hub *feed.Hub
}

func (s *subscription) Close() { s.hub.Unsubscribe(s.Subscriber) }
