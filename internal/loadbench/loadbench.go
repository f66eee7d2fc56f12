// Package loadbench drives a running memd serve over HTTP the way a busy
// team does: many shards, several writers each, recall running, and many
// feed subscribers, then checks that nothing was lost or duplicated.
package loadbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/daemon/auth"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/readbench"
)

// Config sizes a run.
type Config struct {
	Binary      string // the memd executable
	Dir         string // work directory; the daemon's data goes under it
	Shards      int
	Writers     int // per shard
	Facts       int // per writer
	Subscribers int // feed subscribers, each following one shard
	Recallers   int // goroutines calling recall in a loop
	// Paced, when above zero, is how many facts one writer then puts into
	// one shard at PacedRate while every one of Subscribers follows it.
	Paced int
	// Progress, when set, is called now and then with the facts written.
	Progress func(done, total int)
}

// Result is what a run measured and found.
type Result struct {
	Facts      int           // acknowledged writes
	Took       time.Duration // from the first write to the last answer
	Write      []time.Duration
	Recall     []time.Duration
	FeedEvents int // commit events received, over all subscribers
	// FeedLatency is, for each commit event a subscriber received, how
	// long after its writer was answered it arrived (zero when it came
	// first).
	FeedLatency []time.Duration
	Resumed     int // times a subscriber was cut off and resumed with since
	// PacedLatency is FeedLatency for the paced writes: the cost of fanning
	// each commit out to every subscriber, on a machine not saturated.
	PacedLatency []time.Duration
	PeakRSS      int64
	FinalRSS     int64
	Problems     []string // errors, lost or duplicated facts, feed gaps
	ShardCounts  map[memd.ShardID]int
}

// Run starts memd serve, drives the load, stops it, and checks the shards.
//
// It is long because it is the run's script, start to check, in the order a
// reader follows it.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	data := filepath.Join(cfg.Dir, "data")
	d, err := Start(ctx, cfg.Binary, data)
	if err != nil {
		return nil, err
	}
	defer d.Stop()
	token, err := auth.ReadAdminToken(data)
	if err != nil {
		return nil, err
	}
	c := client.New(d.URL, token)
	res := &Result{ShardCounts: make(map[memd.ShardID]int)}
	var pmu sync.Mutex
	problem := func(format string, args ...any) {
		pmu.Lock()
		defer pmu.Unlock()
		if len(res.Problems) < 50 {
			res.Problems = append(res.Problems, fmt.Sprintf(format, args...))
		}
	}

	shards := make([]memd.ShardID, cfg.Shards)
	heads := make(map[memd.ShardID]string)
	for i := range shards {
		name := fmt.Sprintf("load-%d", i)
		if _, err := c.AddAgent(ctx, name, nil); err != nil {
			return nil, fmt.Errorf("create agent %s: %w", name, err)
		}
		shards[i] = memd.AgentShard(name)
	}
	infos, err := c.Shards(ctx)
	if err != nil {
		return nil, err
	}
	for _, in := range infos {
		heads[in.Shard] = in.Head
	}

	stop := make(chan struct{})
	var background sync.WaitGroup

	// Memory, sampled while the load runs.
	var peak atomic.Int64
	background.Add(1)
	go func() {
		defer background.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if rss, err := readbench.ProcessRSS(d.Pid()); err == nil && rss > peak.Load() {
				peak.Store(rss)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()

	// Feed subscribers, each checking that the commits of its shard arrive
	// as an unbroken parent chain, resuming with since when cut off.
	subs := make([]*subscriber, cfg.Subscribers)
	feed := &progress{ch: make(chan struct{})}
	times := &deliveries{answered: make(map[string]time.Time)}
	ready := make(chan error, cfg.Subscribers)
	for i := range subs {
		s := &subscriber{c: c, shard: shards[i%len(shards)], last: heads[shards[i%len(shards)]], problem: problem, feed: feed, times: times}
		subs[i] = s
		background.Add(1)
		go func() { defer background.Done(); s.run(ctx, stop, ready) }()
	}
	for range subs {
		if err := <-ready; err != nil {
			close(stop)
			background.Wait()
			return nil, fmt.Errorf("subscribe to the feed: %w", err)
		}
	}

	// Recall, across every shard, while the writers run.
	var rmu sync.Mutex
	for r := 0; r < cfg.Recallers; r++ {
		background.Add(1)
		go func() {
			defer background.Done()
			words := []string{"lisbon", "deploy", "invoice", "garden", "SQL", "flights", "migrated reports", "writer 3"}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				_, err := c.Recall(ctx, memd.RecallQuery{Q: words[i%len(words)], Agent: fmt.Sprintf("load-%d", i%len(shards))})
				took := time.Since(start)
				if err != nil {
					problem("recall: %v", err)
					return
				}
				rmu.Lock()
				res.Recall = append(res.Recall, took)
				rmu.Unlock()
			}
		}()
	}

	// The writers.
	total := cfg.Shards * cfg.Writers * cfg.Facts
	var done atomic.Int64
	acked := make([]map[string]bool, len(shards))
	lat := make([][]time.Duration, len(shards)*cfg.Writers)
	var wmu sync.Mutex
	for i := range acked {
		acked[i] = make(map[string]bool)
	}
	var writers sync.WaitGroup
	start := time.Now()
	for si, sh := range shards {
		for w := 0; w < cfg.Writers; w++ {
			writers.Add(1)
			go func() {
				defer writers.Done()
				mine := make([]string, 0, cfg.Facts)
				took := make([]time.Duration, 0, cfg.Facts)
				for i := 0; i < cfg.Facts; i++ {
					text, date := factOf(si, w, i)
					t0 := time.Now()
					r, err := c.Remember(ctx, memd.RememberRequest{Shard: sh, Text: text, Tier: memd.TierLog, Date: date,
						Source: memd.Source{Messages: []string{fmt.Sprintf("load-%d-%d-%d", si, w, i)}, Chat: "load"}})
					took = append(took, time.Since(t0))
					if err != nil {
						problem("remember in %s: %v", sh, err)
						break
					}
					times.answer(r.Commit)
					if r.Existing {
						problem("remember in %s: %q was already there", sh, text)
					}
					mine = append(mine, r.Fact.ID)
					if n := done.Add(1); cfg.Progress != nil && n%500 == 0 {
						cfg.Progress(int(n), total)
					}
				}
				wmu.Lock()
				for _, id := range mine {
					acked[si][id] = true
				}
				lat[si*cfg.Writers+w] = took
				wmu.Unlock()
			}()
		}
	}
	writers.Wait()
	res.Took = time.Since(start)
	res.Facts = int(done.Load())
	for _, l := range lat {
		res.Write = append(res.Write, l...)
	}
	if cfg.Progress != nil {
		cfg.Progress(res.Facts, total)
	}

	// Every subscriber must reach its shard's head before the load ends;
	// the feed may lag the writers, but it must keep moving.
	infos, err = c.Shards(ctx)
	if err != nil {
		problem("list shards: %v", err)
	}
	for _, in := range infos {
		heads[in.Shard] = in.Head
	}
	for _, s := range subs {
		if !s.waitFor(heads[s.shard], 60*time.Second) {
			problem("a subscriber of %s stopped at %s, short of %s", s.shard, s.lastSeen(), heads[s.shard])
		}
	}
	close(stop)
	background.Wait()
	for _, s := range subs {
		res.FeedEvents += s.events
		res.Resumed += s.resumed
	}
	res.FeedLatency = times.latencies()
	res.PeakRSS = peak.Load()
	res.FinalRSS, _ = readbench.ProcessRSS(d.Pid())
	if cfg.Paced > 0 && len(shards) > 0 {
		ids, lat, err := paced(ctx, c, shards[0], heads[shards[0]], cfg.Subscribers, cfg.Paced, problem)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			acked[0][id] = true
		}
		res.PacedLatency = lat
	}
	if err := d.Stop(); err != nil {
		problem("memd serve did not stop cleanly: %v", err)
	}

	// What the shards hold: every acknowledged fact, each on one line.
	store, err := gitstore.Open(data, gitstore.Options{NoSync: true, RepackAt: -1})
	if err != nil {
		return res, err
	}
	defer store.Close()
	for si, id := range shards {
		lines, err := factLines(store.ShardDir(id))
		if err != nil {
			return res, err
		}
		res.ShardCounts[id] = len(lines)
		for fid, n := range lines {
			if n > 1 {
				problem("%s holds fact %s on %d lines", id, fid, n)
			}
		}
		for fid := range acked[si] {
			if lines[fid] == 0 {
				problem("%s lost acknowledged fact %s", id, fid)
			}
		}
		if len(lines) != len(acked[si]) {
			problem("%s holds %d facts; %d were acknowledged", id, len(lines), len(acked[si]))
		}
	}
	return res, nil
}

// PacedRate is how many commits a second the paced writer makes.
const PacedRate = 20

// paced has one writer put n facts into shard, from head, at PacedRate
// while subscribers all follow it, and returns the IDs of the facts and
// how long after each answer every subscriber received the commit.
func paced(ctx context.Context, c *client.Client, shard memd.ShardID, head string, subscribers, n int, problem func(string, ...any)) ([]string, []time.Duration, error) {
	stop := make(chan struct{})
	times := &deliveries{answered: make(map[string]time.Time)}
	feed := &progress{ch: make(chan struct{})}
	ready := make(chan error, subscribers)
	subs := make([]*subscriber, subscribers)
	var running sync.WaitGroup
	for i := range subs {
		s := &subscriber{c: c, shard: shard, last: head, problem: problem, feed: feed, times: times}
		subs[i] = s
		running.Add(1)
		go func() { defer running.Done(); s.run(ctx, stop, ready) }()
	}
	defer func() { close(stop); running.Wait() }()
	for range subs {
		if err := <-ready; err != nil {
			return nil, nil, fmt.Errorf("subscribe to the feed: %w", err)
		}
	}
	tick := time.NewTicker(time.Second / PacedRate)
	defer tick.Stop()
	ids := make([]string, 0, n)
	for i := 0; i < n; i++ {
		<-tick.C
		r, err := c.Remember(ctx, memd.RememberRequest{Shard: shard, Text: fmt.Sprintf("Paced fact %d about the Lisbon office", i), Tier: memd.TierLog,
			Source: memd.Source{Messages: []string{fmt.Sprintf("paced-%d", i)}, Chat: "paced"}})
		if err != nil {
			problem("paced remember in %s: %v", shard, err)
			break
		}
		times.answer(r.Commit)
		ids = append(ids, r.Fact.ID)
		head = r.Commit
	}
	for _, s := range subs {
		if !s.waitFor(head, 60*time.Second) {
			problem("a paced subscriber of %s stopped at %s, short of %s", shard, s.lastSeen(), head)
		}
	}
	return ids, times.latencies(), nil
}

// factOf is the text and date of a writer's i-th fact: distinct texts with
// words recall looks for, dates spread over two years.
func factOf(shard, writer, i int) (string, memd.Date) {
	topics := []string{"the Lisbon office", "the deploy pipeline", "invoice 4471", "the community garden", "reports migrated to SQL Server", "flights to Porto"}
	text := fmt.Sprintf("Shard %d writer %d noted item %d about %s", shard, writer, i, topics[i%len(topics)])
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, (i*7+writer)%700)
	return text, memd.DateOf(day)
}

// factLines counts the lines of each fact ID in a shard's fact files.
func factLines(dir string) (map[string]int, error) {
	out := make(map[string]int)
	files, _ := filepath.Glob(filepath.Join(dir, "log", "*.md"))
	days, _ := filepath.Glob(filepath.Join(dir, "log", "*", "*.md"))
	files = append(files, days...)
	files = append(files, filepath.Join(dir, gitstore.ProfileFile))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(data), "\n") {
			if fact, ok := gitstore.ParseLine(line); ok {
				out[fact.ID]++
			}
		}
	}
	return out, nil
}

type subscriber struct {
	c       *client.Client
	shard   memd.ShardID
	problem func(string, ...any)

	mu      sync.Mutex
	last    string
	feed    *progress
	events  int
	resumed int
	times   *deliveries
}

func (s *subscriber) lastSeen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// progress is closed and replaced each time any subscriber receives an
// event: the feed publishes shard by shard, so one shard may go quiet for
// a while when the feed is catching up with another.
type progress struct {
	mu sync.Mutex
	ch chan struct{}
}

func (p *progress) moved() {
	p.mu.Lock()
	close(p.ch)
	p.ch = make(chan struct{})
	p.mu.Unlock()
}

func (p *progress) next() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ch
}

// waitFor waits until the subscriber has received commit head; it gives
// up when no subscriber received anything for quiet.
func (s *subscriber) waitFor(head string, quiet time.Duration) bool {
	for {
		moved := s.feed.next() // before reading last, so no event is missed
		s.mu.Lock()
		last := s.last
		s.mu.Unlock()
		if last == head {
			return true
		}
		select {
		case <-moved:
		case <-time.After(quiet):
			return false
		}
	}
}

func (s *subscriber) run(ctx context.Context, stop chan struct{}, ready chan<- error) {
	first := true
	for {
		q := memd.FeedQuery{Shards: []memd.ShardID{s.shard}}
		if last := s.lastSeen(); last != "" {
			q.Since = map[memd.ShardID]string{s.shard: last}
		}
		sub, err := s.c.Subscribe(ctx, q)
		if first {
			ready <- err
			first = false
		}
		if err != nil {
			if !first {
				s.problem("resume the feed of %s: %v", s.shard, err)
			}
			return
		}
		go func() {
			select {
			case <-stop:
				sub.Close()
			case <-sub.Done():
			}
		}()
		for ev := range sub.Events() {
			if ev.Type != memd.EventCommit {
				continue
			}
			s.mu.Lock()
			if ev.Parent != s.last {
				s.problem("feed of %s: commit %s has parent %s, the last one received was %s", s.shard, ev.Commit, ev.Parent, s.last)
			}
			s.last = ev.Commit
			s.events++
			s.times.receive(ev.Commit)
			s.mu.Unlock()
			s.feed.moved()
		}
		var fc *client.FeedClosed
		select {
		case <-stop:
			return
		default:
		}
		if errors.As(sub.Err(), &fc) && fc.Overrun() {
			s.mu.Lock()
			s.resumed++
			s.mu.Unlock()
			continue
		}
		s.problem("feed of %s ended: %v", s.shard, sub.Err())
		return
	}
}

// deliveries times the feed: when each commit's writer was answered, and
// when each subscriber received it.
type deliveries struct {
	mu       sync.Mutex
	answered map[string]time.Time
	received []delivery
}

type delivery struct {
	commit string
	at     time.Time
}

func (d *deliveries) answer(commit string) {
	if commit == "" {
		return
	}
	d.mu.Lock()
	d.answered[commit] = time.Now()
	d.mu.Unlock()
}

func (d *deliveries) receive(commit string) {
	d.mu.Lock()
	d.received = append(d.received, delivery{commit, time.Now()})
	d.mu.Unlock()
}

// latencies returns, for each delivery of a commit a writer was answered
// for, how long after the answer it arrived.
func (d *deliveries) latencies() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]time.Duration, 0, len(d.received))
	for _, r := range d.received {
		if at, ok := d.answered[r.commit]; ok {
			out = append(out, max(0, r.at.Sub(at)))
		}
	}
	return out
}

// Daemon is memd serve running as a child process.
type Daemon struct {
	URL     string // where it listens, as it printed
	cmd     *exec.Cmd
	stopped bool
}

// Start runs binary serve on data, on a free loopback port, with any
// flags more, and waits for the URL it prints.
func Start(ctx context.Context, binary, data string, flags ...string) (*Daemon, error) {
	cmd := exec.CommandContext(ctx, binary, append([]string{"serve", "--data", data, "--listen", "127.0.0.1:0", "--log-level", "error"}, flags...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("memd serve did not start")
	}
	line := sc.Text()
	i := strings.Index(line, "http://")
	if i < 0 {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("memd serve printed %q", line)
	}
	go func() {
		for sc.Scan() {
		}
	}()
	return &Daemon{cmd: cmd, URL: strings.Fields(line[i:])[0]}, nil
}

// Pid is the daemon's process ID.
func (d *Daemon) Pid() int { return d.cmd.Process.Pid }

// Stop asks the daemon to shut down and waits for it; later calls do
// nothing.
func (d *Daemon) Stop() error {
	if d.stopped {
		return nil
	}
	d.stopped = true
	d.cmd.Process.Signal(syscall.SIGTERM)
	return d.cmd.Wait()
}
