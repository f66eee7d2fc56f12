// Package scalebench measures memd at the sizes a team's store reaches:
// a data directory of n facts, in one shard or spread over 100, written by
// another process and then served, restarted, reindexed and repacked, each
// figure taken from outside the daemon as a user meets it. It backs
// `memd bench --scale`.
package scalebench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/daemon/auth"
	"github.com/memd/memd/daemon/vectors"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/loadbench"
	"github.com/memd/memd/internal/readbench"
	"github.com/memd/memd/internal/writebench"
)

// The caller every recall is made as: an agent reading its own shard, its
// user's (in a direct chat) and three projects'.
const (
	agent = "bench"
	user  = "pat"
)

var projects = []string{"alpha", "beta", "gamma"}

// settle is how long after a start memd is left alone before its steady
// memory is read: longer than it keeps what an unused shard's writes held.
const settle = 90 * time.Second

// Shape is one store: Facts facts over Shards shards (1 or 100), with a
// vector of Dims dimensions for every fact when Dims is not 0.
type Shape struct {
	Facts, Shards, Dims int
}

// Row is what one shape measured.
type Row struct {
	Shape
	FirstStart, Restart time.Duration   // serve started until its first recall answered
	RestartAfterWrites  time.Duration   // the same, after memd wrote and stopped
	FirstIndexed        time.Duration   // the first start until every shard was indexed
	FirstPeak           int64           // the first start's peak resident memory, once all indexed
	Reindex             time.Duration   // memd reindex, a new process
	ReindexPeak         int64           // its peak resident memory, bytes
	Steady, Peak        int64           // memd serve's resident memory once idle, and its peak
	RecallCold, Recall  []time.Duration // the first 1,000 recalls after memd sat idle, and the 2,000 after
	RecallDecoded       []time.Duration // the 2,000 after, with the client's decoding of each answer
	RecallEmptied       []time.Duration // 1,000 more, the processor's caches emptied before each
	Remember            []time.Duration // remember over HTTP into the largest shard's log of today, a full day: the first after memd sat idle, then 99 more
	Markdown            int64           // bytes of fact files
	Disk, Repacked      int64           // bytes under the shards' .git, before and after git repack
	Unsound             []string        // shards git fsck --strict finds fault with
	Writes              Writes          // writes beside the git CLI, into the agent's shard
}

// Build writes the store of a shape into data with memd's write path, as
// an import would: the agent's shard holds Facts (one shard), or each of
// 100 shards — the agent's, its user's, three projects' and 95 other
// agents' — a hundredth of them, every shard's log a full 16 months, the
// facts those of the read-path benchmark (readbench.FactText).
func Build(data string, s Shape) error {
	if err := build(data, s); err != nil {
		return err
	}
	// On disk before anything is measured, as a store that has been there
	// a while is: left to the kernel, the write-back of hundreds of
	// megabytes lands half a minute later, in the middle of a measure.
	// (After the store closed: closing writes where its facts are.)
	syscall.Sync()
	return nil
}

func build(data string, s Shape) error {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := gitstore.Open(data, gitstore.Options{NoSync: true, RepackAt: -1, Logger: logger})
	if err != nil {
		return err
	}
	defer store.Close()
	ids := []memd.ShardID{memd.AgentShard(agent)}
	if s.Shards > 1 {
		ids = append(ids, memd.UserShard(user))
		for _, p := range projects {
			ids = append(ids, memd.ProjectShard(p))
		}
		for i := len(ids); i < s.Shards; i++ {
			ids = append(ids, memd.AgentShard(fmt.Sprintf("agent%03d", i)))
		}
	}
	today := time.Now()
	per := s.Facts / len(ids)
	for j, id := range ids {
		// Facts as a team's memory holds them: most words in well under a
		// percent of the facts.
		text := func(i int) string { return readbench.FactText(j*per + i) }
		if _, err := writebench.PrefillWith(store, id, per, today, text); err != nil {
			return fmt.Errorf("prefill %s: %w", id, err)
		}
	}
	if s.Dims > 0 {
		if err := writeVectors(data, ids, per, s.Dims); err != nil {
			return err
		}
	}
	reg, _, err := auth.Open(data, nil)
	if err != nil {
		return err
	}
	_, err = reg.Add(agent, projects)
	return err
}

// vectorModel is the model the vectors of a store with Dims are of.
const vectorModel = "bench-vectors"

// vectorOf is a text's vector in such a store, and its query's: random,
// the same for the same text. Meaning plays no part in what is measured.
func vectorOf(text string, dims int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	rng := rand.New(rand.NewPCG(h.Sum64(), uint64(dims)))
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// writeVectors writes the vectors of the facts Build wrote, as memd keeps
// them once an endpoint has embedded them: in its file of vectorModel.
func writeVectors(data string, ids []memd.ShardID, per, dims int) error {
	set, err := vectors.Open(daemon.VectorsFile(data, vectorModel), vectorModel)
	if err != nil {
		return err
	}
	for j, id := range ids {
		vs := make([]vectors.Vector, per)
		for i := range per {
			text := readbench.FactText(j*per + i)
			vs[i] = vectors.Vector{Shard: id, ID: memd.FactID(text), V: vectorOf(text, dims)}
		}
		if err := set.Put(vs); err != nil {
			set.Close()
			return err
		}
	}
	return set.Close()
}

// endpoint serves the embeddings of vectorModel for queries, on loopback.
func endpoint(dims int) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		data := make([]item, len(req.Input))
		for i, text := range req.Input {
			data[i] = item{"embedding", i, vectorOf(text, dims)}
		}
		w.Header().Set("Content-Type", "application/json") // the client takes nothing else
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": vectorModel, "data": data})
	}))
}

// Measure serves, restarts, reindexes and repacks the store in data,
// made by Build for s, with the memd binary self.
//
// It is long because it is the measurement's script, each step timed in
// order.
func Measure(ctx context.Context, self, data string, s Shape, progress func(string)) (Row, error) {
	row := Row{Shape: s}
	token, err := auth.ReadAdminToken(data)
	if err != nil {
		return row, err
	}
	var flags []string
	if s.Dims > 0 {
		srv := endpoint(s.Dims)
		defer srv.Close()
		flags = []string{"--embed-url", srv.URL + "/v1", "--embed-model", vectorModel}
	}
	progress("first start")
	d, took, err := startAndRecall(ctx, self, data, token, flags)
	if err != nil {
		return row, err
	}
	row.FirstStart = took
	// A store no memd has served yet is indexed in the background; the
	// daemon is stopped (writing its snapshots) only once that is done, as
	// a daemon that ran for a while would be.
	progress("first start: indexing every shard")
	waited, err := waitIndexed(ctx, d.URL, token, s.Dims > 0)
	if err != nil {
		d.Stop()
		return row, err
	}
	row.FirstIndexed = took + waited
	if row.FirstPeak, err = readbench.ProcessPeakRSS(d.Pid()); err != nil {
		d.Stop()
		return row, err
	}
	d.Stop()

	progress("restart")
	d, took, err = startAndRecall(ctx, self, data, token, flags)
	if err != nil {
		return row, err
	}
	defer d.Stop()
	row.Restart = took
	// memd reads every shard in the background after it starts, and what
	// a shard's writes hold goes a minute after their last use: steady
	// memory is read once both are done.
	progress("idle")
	select {
	case <-ctx.Done():
		return row, ctx.Err()
	case <-time.After(settle):
	}
	if row.Steady, err = readbench.ProcessRSS(d.Pid()); err != nil {
		return row, err
	}
	progress("recall")
	for i := 0; i < 3000; i++ {
		// Timed until the answer's last byte: what memd takes. Decoding
		// it is the client's work, and its cost its language's; a Go
		// client's is timed too, apart.
		start := time.Now()
		body, err := get(ctx, d.URL, token, recallPath(readbench.Queries[i%len(readbench.Queries)]))
		took := time.Since(start)
		if err != nil {
			return row, err
		}
		var res memd.RecallResult
		if err := json.Unmarshal(body, &res); err != nil {
			return row, fmt.Errorf("recall: %w", err)
		}
		decoded := time.Since(start)
		if s.Dims > 0 && res.ByWordsAlone != "" {
			// A figure of recall by words would pass for one by meaning.
			return row, fmt.Errorf("recall by meaning answered by words alone: %s", res.ByWordsAlone)
		}
		// The first calls after idle pay for memory handed back to the
		// system and caches gone cold.
		if i < 1000 {
			row.RecallCold = append(row.RecallCold, took)
		} else {
			row.Recall = append(row.Recall, took)
			row.RecallDecoded = append(row.RecallDecoded, decoded)
		}
	}
	progress("recall, the caches emptied before each")
	if row.RecallEmptied, err = recallCachesEmptied(ctx, d.URL, token, s.Dims > 0); err != nil {
		return row, err
	}
	progress("remember into today's full log")
	for i := 0; i < 100; i++ {
		body, _ := json.Marshal(map[string]string{"text": writebench.Text("scale", i), "tier": "log"})
		start := time.Now()
		if err := call(ctx, d.URL, token, http.MethodPost, "/v1/shards/agent/"+agent+"/facts", body); err != nil {
			return row, err
		}
		row.Remember = append(row.Remember, time.Since(start))
	}
	if row.Peak, err = readbench.ProcessPeakRSS(d.Pid()); err != nil {
		return row, err
	}
	d.Stop()

	// A daemon that wrote and stopped, as every deploy stops one.
	progress("restart after writes")
	if d, row.RestartAfterWrites, err = startAndRecall(ctx, self, data, token, flags); err != nil {
		return row, err
	}
	d.Stop()

	progress("memd reindex")
	if row.Reindex, row.ReindexPeak, err = runWatched(ctx, self, "reindex", "--data", data); err != nil {
		return row, err
	}

	progress("disk")
	shards := filepath.Join(data, "shards")
	if row.Markdown, row.Disk, err = sizes(shards); err != nil {
		return row, err
	}
	progress("git repack")
	if err := repackAll(ctx, shards); err != nil {
		return row, err
	}
	if _, row.Repacked, err = sizes(shards); err != nil {
		return row, err
	}
	progress("git fsck --strict")
	if row.Unsound, err = fsckAll(ctx, shards); err != nil {
		return row, err
	}
	row.Writes, err = CompareWrites(ctx, self, data, measuredWrites, flags, progress)
	return row, err
}

// WriteCounts are how many facts each writer of a comparison of writes
// puts into the agent's shard, over writebench.Rounds rounds.
type WriteCounts struct {
	GitCLI, OneClient, EightClients int
}

// Writes is what a comparison of writes measured: each fact one commit,
// into the agent's shard's log of today.
type Writes struct {
	GitCLI, OneClient, EightClients writebench.Result
}

// measuredWrites are the counts of memd bench --scale: the git CLI is the
// slowest, and each round must last long enough to time.
var measuredWrites = WriteCounts{GitCLI: 200, OneClient: 800, EightClients: 2400}

const eightClients = 8

// CompareWrites writes facts into the agent's shard's log of today with
// memd serve over HTTP, from one client and from eight, and with the git
// CLI (add + commit) into a copy of the shard made just before, in
// interleaved rounds so that every ratio compares runs of the same
// minutes. memd serve runs with flags, as a user runs it: without
// --no-fsync, each commit is fsynced, where the git CLI syncs nothing.
// The store in data, made by Build, must not be served.
func CompareWrites(ctx context.Context, self, data string, n WriteCounts, flags []string, progress func(string)) (Writes, error) {
	var w Writes
	token, err := auth.ReadAdminToken(data)
	if err != nil {
		return w, err
	}
	id := memd.AgentShard(agent)
	dir, path, err := todaysLog(data, id)
	if err != nil {
		return w, err
	}
	gitDir := data + "-git"
	os.RemoveAll(gitDir) // what a run stopped half way left
	if err := writebench.CopyRepo(dir, gitDir); err != nil {
		return w, err
	}
	defer os.RemoveAll(gitDir)
	d, err := loadbench.Start(ctx, self, data, flags...)
	if err != nil {
		return w, err
	}
	defer d.Stop()
	// Neither side is timed starting up: memd reads its index in the
	// background after it answers, and the first write on each side
	// reads what later ones find at hand.
	if _, err := waitIndexed(ctx, d.URL, token, false); err != nil {
		return w, err
	}
	c := client.New(d.URL, token)
	// A connection a client, as agents each hold their own.
	c.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: eightClients}}
	today := time.Now()
	progress("writes: one on each side, untimed")
	if _, err := writebench.GitCLI(gitDir, path, 1, "scale-first", today); err != nil {
		return w, err
	}
	if _, err := writebench.HTTP(ctx, c, id, 1, 1, "scale-first", today); err != nil {
		return w, err
	}
	for round := range writebench.Rounds {
		series := fmt.Sprintf("scale-r%d", round)
		progress(fmt.Sprintf("writes, round %d of %d: the git CLI", round+1, writebench.Rounds))
		g, err := writebench.GitCLI(gitDir, path, writebench.Share(n.GitCLI, round), series, today)
		if err != nil {
			return w, err
		}
		w.GitCLI.Add(g)
		progress(fmt.Sprintf("writes, round %d of %d: memd over HTTP", round+1, writebench.Rounds))
		one, err := writebench.HTTP(ctx, c, id, 1, writebench.Share(n.OneClient, round), series+"-one", today)
		if err != nil {
			return w, err
		}
		w.OneClient.Add(one)
		eight, err := writebench.HTTP(ctx, c, id, eightClients, writebench.Share(n.EightClients, round), series+"-eight", today)
		if err != nil {
			return w, err
		}
		w.EightClients.Add(eight)
	}
	return w, d.Stop()
}

// todaysLog returns a shard's working tree and, within it, the file memd
// puts a log fact of today in, read with memd stopped.
func todaysLog(data string, id memd.ShardID) (dir, path string, err error) {
	store, err := gitstore.Open(data, gitstore.Options{NoSync: true, RepackAt: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return "", "", err
	}
	defer store.Close()
	sh, err := store.Shard(id)
	if err != nil {
		return "", "", err
	}
	path, err = sh.FileFor(memd.TierLog, memd.DateOf(time.Now()))
	return store.ShardDir(id), path, err
}

// runWatched runs the memd binary, and returns how long it took and its
// peak resident memory, read from /proc while it runs (the rusage of a
// child counts the memory of the process it was forked from).
func runWatched(ctx context.Context, self string, args ...string) (time.Duration, int64, error) {
	cmd := exec.CommandContext(ctx, self, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peak int64
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return 0, 0, fmt.Errorf("memd %s: %v: %s", args[0], err, out.Bytes())
			}
			return time.Since(start), peak, nil
		case <-t.C:
			if hwm, err := readbench.ProcessPeakRSS(cmd.Process.Pid); err == nil {
				peak = max(peak, hwm)
			}
		}
	}
}

func recallPath(q string) string {
	v := url.Values{"agent": {agent}, "user": {user}, "chat_kind": {"direct"}, "projects": {strings.Join(projects, ",")}, "q": {q}}
	return "/v1/recall?" + v.Encode()
}

// startAndRecall starts memd serve and times how long until a recall
// answers.
func startAndRecall(ctx context.Context, self, data, token string, flags []string) (*loadbench.Daemon, time.Duration, error) {
	start := time.Now()
	d, err := loadbench.Start(ctx, self, data, flags...)
	if err != nil {
		return nil, 0, err
	}
	if err := call(ctx, d.URL, token, http.MethodGet, recallPath("Lisbon"), nil); err != nil {
		d.Stop()
		return nil, 0, err
	}
	return d, time.Since(start), nil
}

// waitIndexed asks memd's status until its index has read every shard,
// and with vectors until recall is by meaning, and returns how long that
// took.
func waitIndexed(ctx context.Context, base, token string, vectors bool) (time.Duration, error) {
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		var st memd.Status
		if err := getJSON(ctx, base, token, "/v1/status", &st); err != nil {
			return 0, err
		}
		if st.Indexing == 0 && (!vectors || st.Meaning != nil && st.Meaning.Ready) {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
		}
	}
}

func getJSON(ctx context.Context, base, token, path string, v any) error {
	body, err := get(ctx, base, token, path)
	if err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}

// get returns the body of a GET's answer, read to its end.
func get(ctx context.Context, base, token, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
	}
	return b, nil
}

func call(ctx context.Context, base, token, method, path string, js []byte) error {
	var body io.Reader
	if js != nil {
		body = bytes.NewReader(js)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if js != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	return nil
}

// sizes adds up the Markdown files of the working trees and the bytes
// under each .git.
func sizes(shards string) (markdown, git int64, err error) {
	err = filepath.WalkDir(shards, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case strings.Contains(path, string(filepath.Separator)+".git"+string(filepath.Separator)):
			git += info.Size()
		case strings.HasSuffix(path, ".md"):
			markdown += info.Size()
		}
		return nil
	})
	return markdown, git, err
}

// fsckAll runs git fsck --strict in every shard and returns those it
// finds fault with, each with what it said.
func fsckAll(ctx context.Context, shards string) ([]string, error) {
	dirs, err := shardDirs(shards)
	if err != nil {
		return nil, err
	}
	var unsound []string
	for _, dir := range dirs {
		cmd := exec.CommandContext(ctx, "git", "-C", dir, "fsck", "--strict", "--no-progress")
		if out, err := cmd.CombinedOutput(); err != nil {
			unsound = append(unsound, fmt.Sprintf("%s: %v: %s", dir, err, out))
		}
	}
	return unsound, nil
}

// shardDirs lists the shards' working trees.
func shardDirs(shards string) ([]string, error) {
	gits, err := filepath.Glob(filepath.Join(shards, "*", "*", ".git"))
	for i, g := range gits {
		gits[i] = filepath.Dir(g)
	}
	return gits, err
}

// repackAll runs git repack -ad in every shard.
func repackAll(ctx context.Context, shards string) error {
	dirs, err := shardDirs(shards)
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		cmd := exec.CommandContext(ctx, "git", "-C", dir, "repack", "-adq")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git repack in %s: %v: %s", dir, err, out)
		}
	}
	return nil
}

// recallCachesEmptied times 1,000 recalls, each after the processor's
// caches were emptied. Back to back, a recall finds the index in the
// caches where the one before left it; an agent's calls come seconds
// apart, with other programs' work between them. The client's own
// sending and reading are cold too, and timed, as in every recall column.
// byMeaning: each answer must be by meaning, not by words alone.
func recallCachesEmptied(ctx context.Context, url, token string, byMeaning bool) ([]time.Duration, error) {
	spill := newCacheSpill()
	// The buffers go with this call: the client measuring memd is a
	// light one again for what comes after.
	defer debug.FreeOSMemory()
	var out []time.Duration
	for i := range 1000 {
		spill.empty()
		start := time.Now()
		body, err := get(ctx, url, token, recallPath(readbench.Queries[i%len(readbench.Queries)]))
		if err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
		var res memd.RecallResult
		if err := json.Unmarshal(body, &res); err != nil {
			return nil, fmt.Errorf("recall: %w", err)
		}
		if byMeaning && res.ByWordsAlone != "" {
			return nil, fmt.Errorf("recall by meaning answered by words alone: %s", res.ByWordsAlone)
		}
	}
	return out, nil
}

// cacheSpill empties the processor's caches of what was in them, by
// reading buffers larger than any cache of this machine, one for each
// processor Go runs on, at once. Reading rather than writing leaves the
// caches holding clean lines, which memd's reads replace without writing
// them back first.
type cacheSpill struct {
	bufs [][]byte
	sum  byte // what the reads add up to, so that they are not left out
}

// spillBytes is several times the largest last-level cache of a server
// processor of a few cores' share.
const spillBytes = 64 << 20

func newCacheSpill() *cacheSpill {
	c := &cacheSpill{bufs: make([][]byte, runtime.GOMAXPROCS(0))}
	for i := range c.bufs {
		b := make([]byte, spillBytes)
		for j := range b {
			b[j] = byte(j) // pages of their own, not the kernel's one page of zeros
		}
		c.bufs[i] = b
	}
	return c
}

func (c *cacheSpill) empty() {
	sums := make([]byte, len(c.bufs))
	var wg sync.WaitGroup
	for i, b := range c.bufs {
		wg.Go(func() {
			var sum byte
			for j := 0; j < len(b); j += 64 {
				sum += b[j]
			}
			sums[i] = sum
		})
	}
	wg.Wait()
	for _, s := range sums {
		c.sum += s
	}
}
