// Package writebench measures memd's write path against the git CLI doing
// the same commits, one fact per commit, in the same run. It backs both
// `go test -bench` and `memd bench`.
package writebench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

// Result is one measured run.
type Result struct {
	Name    string
	Facts   int
	Elapsed time.Duration
}

// Rounds is how many interleaved rounds a comparison with the git CLI is
// measured in: a busy machine then slows every row alike, not one.
const Rounds = 4

// Share is round's part of n facts split over Rounds rounds.
func Share(n, round int) int {
	if round < n%Rounds {
		return n/Rounds + 1
	}
	return n / Rounds
}

// Add counts another run of the same kind into r.
func (r *Result) Add(o Result) {
	r.Name, r.Facts, r.Elapsed = o.Name, r.Facts+o.Facts, r.Elapsed+o.Elapsed
}

// PerSecond returns facts written per second.
func (r Result) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Facts) / r.Elapsed.Seconds()
}

var (
	subjects = []string{"The team", "Alice", "The client", "Our CFO", "The ops rotation", "Marta", "The vendor", "Project Apollo", "The reports service", "The design review"}
	verbs    = []string{"decided to use", "prefers", "moved the deadline for", "asked about", "migrated", "booked", "rejected", "approved", "needs", "reviewed"}
	objects  = []string{"Postgres for the reports", "a rooftop venue in Lisbon", "the quarterly budget", "SQL Server", "the onboarding flow", "weekly status emails", "the staging database", "the billing migration", "two extra engineers", "the launch checklist"}
)

// Text returns the i-th distinct fact text of a series, about 60-90
// characters of plausible memory.
func Text(series string, i int) string {
	return fmt.Sprintf("%s %s %s (%s item %d)", subjects[i%len(subjects)], verbs[(i/10)%len(verbs)], objects[(i/100)%len(objects)], series, i)
}

// prefillDays is how far back a prefilled shard's history reaches: 16
// months of 28 days.
const prefillDays = 16 * 28

// Prefill writes n log facts, dated evenly over the 16 months up to today,
// into a new shard as a stand-in for a long-lived memory. The files are
// laid out as memd lays them out writing one fact at a time: a month's log
// until it reaches gitstore.SplitLogAt, then a file a day; today's file
// holds at least a full day's share, as late in a day.
func Prefill(s *gitstore.Store, id memd.ShardID, n int, today time.Time) (*gitstore.Shard, error) {
	return PrefillWith(s, id, n, today, func(i int) string { return Text("history", i) })
}

// PrefillWith is Prefill with the i-th fact's text given by text.
func PrefillWith(s *gitstore.Store, id memd.ShardID, n int, today time.Time, text func(int) string) (*gitstore.Shard, error) {
	sh, err := s.CreateShard(id)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return sh, nil
	}
	rng := rand.New(rand.NewPCG(1, 2))
	facts := make([]memd.Fact, n)
	for i := range facts {
		day := today.AddDate(0, 0, -rng.IntN(prefillDays))
		facts[i] = memd.Fact{Text: text(i), Date: memd.DateOf(day), Tier: memd.TierLog}
	}
	slices.SortStableFunc(facts, func(a, b memd.Fact) int { return a.Date.Days() - b.Date.Days() })
	// Two commits: the first fills each month's log up to the split, the
	// second sends the rest of every such month to its days' files.
	var months, days []gitstore.Edit
	size := make(map[string]int)
	for _, f := range facts {
		e := gitstore.Edit{Op: gitstore.AddFact, Fact: f}
		if m := gitstore.MonthLog(f.Date); size[m] < gitstore.SplitLogAt {
			size[m] += len(gitstore.FormatLine(f))
			months = append(months, e)
		} else {
			days = append(days, e)
		}
	}
	for _, edits := range [][]gitstore.Edit{months, days} {
		if len(edits) == 0 {
			continue
		}
		if _, err := sh.Apply(gitstore.Change{Author: gitstore.Signature{Name: "import", Email: "import@memd"}, Message: "import: prefill", Edits: edits}); err != nil {
			return nil, err
		}
	}
	return sh, nil
}

// Memd writes n facts to today's log with memd's write path from the given
// number of concurrent writers, each fact its own commit with trailers.
func Memd(sh *gitstore.Shard, writers, n int, series string, today time.Time) (Result, error) {
	date := memd.DateOf(today)
	took, err := concurrently(writers, n, func(i int) error {
		text := Text(series, i)
		id := memd.FactID(text)
		msg := provenance.Message(provenance.Subject(memd.OpRemember, text), memd.Provenance{
			Op: memd.OpRemember, FactIDs: []string{id}, Tier: memd.TierLog,
			SourceMessages: []string{fmt.Sprintf("msg_%s_%d", series, i)}, ChatKind: memd.ChatAPI, LearnedBy: memd.LearnedExplicit,
		})
		_, err := sh.Apply(gitstore.Change{
			Author:  gitstore.Signature{Name: "bench", Email: "bench@agents.memd"},
			Message: msg,
			Edits:   []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: text, Date: date, Tier: memd.TierLog}}},
		})
		return err
	})
	return Result{Name: fmt.Sprintf("memd, %d writer%s", writers, plural(writers)), Facts: n, Elapsed: took}, err
}

// HTTP writes n facts to a shard's log of today through memd serve's API,
// from the given number of concurrent clients, as agents do: each fact one
// remember, one commit. A fact memd answers was already there made no
// commit and would flatter the rate: it is an error.
func HTTP(ctx context.Context, c *client.Client, shard memd.ShardID, clients, n int, series string, today time.Time) (Result, error) {
	date := memd.DateOf(today)
	took, err := concurrently(clients, n, func(i int) error {
		text := Text(series, i)
		r, err := c.Remember(ctx, memd.RememberRequest{Shard: shard, Text: text, Tier: memd.TierLog, Date: date,
			Source: memd.Source{Messages: []string{fmt.Sprintf("msg_%s_%d", series, i)}}})
		if err == nil && r.Existing {
			err = fmt.Errorf("remember %q: already there, no commit made", text)
		}
		return err
	})
	return Result{Name: fmt.Sprintf("memd over HTTP, %d client%s", clients, plural(clients)), Facts: n, Elapsed: took}, err
}

// concurrently calls write for facts 0 to n-1 from the given number of
// writers, each taking every writers-th, and returns how long all took
// and the first error (a writer stops at its own).
func concurrently(writers, n int, write func(i int) error) (time.Duration, error) {
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += writers {
				if err := write(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return time.Since(start), <-errs
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// GitCLI writes n facts to the file path (relative to dir, the file memd
// would write today's facts to) the way a script would with git: append
// the line, git add, git commit, per fact.
func GitCLI(dir, path string, n int, series string, today time.Time) (Result, error) {
	date := memd.DateOf(today)
	full := filepath.Join(dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return Result{}, err
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		text := Text(series, i)
		f, err := os.OpenFile(full, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return Result{}, err
		}
		_, err = f.WriteString(gitstore.FormatLine(memd.Fact{Text: text, Date: date, Tier: memd.TierLog}))
		f.Close()
		if err != nil {
			return Result{}, err
		}
		if err := git(dir, "add", path); err != nil {
			return Result{}, err
		}
		msg := provenance.Message(provenance.Subject(memd.OpRemember, text), memd.Provenance{Op: memd.OpRemember,
			FactIDs: []string{memd.FactID(text)}, Tier: memd.TierLog, SourceMessages: []string{fmt.Sprintf("msg_%s_%d", series, i)}, LearnedBy: memd.LearnedExplicit})
		if err := git(dir, "commit", "-q", "--no-verify", "-m", msg); err != nil {
			return Result{}, err
		}
	}
	return Result{Name: "git CLI (add + commit)", Facts: n, Elapsed: time.Since(start)}, nil
}

func git(dir string, args ...string) error {
	cmd := exec.Command("git", append([]string{"-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "gc.auto=0"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("git %s: %v: %s", strings.Join(args[:1], " "), err, out)
	}
	return nil
}

// CopyRepo copies a shard's repository (working tree and .git) with cp -a,
// so the git CLI starts from exactly the state memd does. Copied files
// are new inodes, which the index's stat data does not name: git would
// hash every file of the shard again at its first commit, timed. The
// copy's index is refreshed first, and the copy written to disk: left to
// the kernel, its write-back (hundreds of megabytes for a large shard)
// lands half a minute later, in a timed round, and slows the side that
// syncs each commit (measured: a lone writer 10-20% slower in those
// rounds).
func CopyRepo(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	out, err := exec.Command("cp", "-a", from, to).CombinedOutput()
	if err != nil {
		return fmt.Errorf("copy %s: %v: %s", from, err, out)
	}
	// Exit status 1 only says some file differs from the index: its
	// entry stays, as it was.
	if err := git(to, "update-index", "-q", "--refresh"); err != nil && !strings.Contains(err.Error(), "exit status 1") {
		return err
	}
	syscall.Sync()
	return nil
}
