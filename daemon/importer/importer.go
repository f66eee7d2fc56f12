// Package importer brings an OpenTeam-style memory folder into memd's
// shards: one commit per fact, with the fact's own date, traced to the file
// it came from.
//
// The folder holds, each with profile.md and log/*.md:
//
//	agents/<bot>/memory/                        -> agent/<bot>
//	user-memory/by-agent/<bot>/                 -> user/<user>
//	projects/<slug>/memory/by-agent/<bot>/      -> project/<slug>
//
// The shared scopes keep one folder per writing bot; they merge into one
// shard, and where bots hold the same fact the newest date wins (lasting if
// any holds it in its profile). A fact the
// shard already holds is left as it is, so importing twice changes nothing.
package importer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

// Report says what an import did.
type Report struct {
	Shards   map[memd.ShardID]*ShardReport
	Skipped  []string // lines that looked like facts but were refused, with why
	Problems []string // files that could not be read
}

// ShardReport counts one shard's facts.
type ShardReport struct {
	Found    int // distinct facts in the folder
	Imported int // committed now
	Present  int // already in the shard
}

// fact is one fact found in the folder, with where it came from.
type fact struct {
	memd.Fact
	bot  string
	file string // path relative to the folder
}

// Plan is what a folder holds, per shard: the facts to import, merged
// newest-wins, oldest first.
type Plan struct {
	shards map[memd.ShardID][]fact
	Report *Report
}

// Read reads the folder into a plan. user names the person whose memory
// user-memory/ holds; it is required only when that folder has facts.
func Read(dir, user string) (*Plan, error) {
	shards, rep, err := read(dir, user)
	if err != nil {
		return nil, err
	}
	return &Plan{shards: shards, Report: rep}, nil
}

// read reads the folder's files into facts by shard, and the report of
// what it skipped. It is long for its walk over the folder's kinds of
// file, each read in a few lines.
func read(dir, user string) (map[memd.ShardID][]fact, *Report, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, nil, err
	} else if !st.IsDir() {
		return nil, nil, memd.Errorf(memd.EINVALID, "%s is not a folder", dir)
	}
	rep := &Report{Shards: make(map[memd.ShardID]*ShardReport)}
	found := make(map[memd.ShardID]map[string]fact)
	add := func(id memd.ShardID, bot, root string) error {
		facts, err := readScope(dir, root, bot, rep)
		if err != nil {
			return err
		}
		if found[id] == nil {
			found[id] = make(map[string]fact)
		}
		for _, f := range facts {
			old, ok := found[id][f.ID]
			if ok && !old.Date.Before(f.Date) {
				f, old = old, f
			}
			// A fact one bot holds as lasting stays lasting, whatever
			// another logged of it later.
			if ok && old.Tier == memd.TierProfile {
				f.Tier = memd.TierProfile
			}
			found[id][f.ID] = f
		}
		return nil
	}
	for _, bot := range subdirs(filepath.Join(dir, "agents")) {
		id, err := memd.ParseShardID("agent/" + bot)
		if err != nil {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("agents/%q: %v", bot, memd.ErrorMessage(err)))
			continue
		}
		if err := add(id, bot, filepath.Join("agents", bot, "memory")); err != nil {
			return nil, nil, err
		}
	}
	if bots := subdirs(filepath.Join(dir, "user-memory", "by-agent")); len(bots) > 0 {
		if user == "" {
			return nil, nil, memd.Errorf(memd.EINVALID, "%s holds user memory: name the person it is about with --user", dir)
		}
		id, err := memd.ParseShardID("user/" + user)
		if err != nil {
			return nil, nil, err
		}
		for _, bot := range bots {
			if err := memd.ValidateName(bot); err != nil {
				rep.Skipped = append(rep.Skipped, fmt.Sprintf("user-memory/by-agent/%q: %v", bot, memd.ErrorMessage(err)))
				continue
			}
			if err := add(id, bot, filepath.Join("user-memory", "by-agent", bot)); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, slug := range subdirs(filepath.Join(dir, "projects")) {
		id, err := memd.ParseShardID("project/" + slug)
		if err != nil {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("projects/%s: %v", slug, memd.ErrorMessage(err)))
			continue
		}
		for _, bot := range subdirs(filepath.Join(dir, "projects", slug, "memory", "by-agent")) {
			if err := memd.ValidateName(bot); err != nil {
				rep.Skipped = append(rep.Skipped, fmt.Sprintf("projects/%s/memory/by-agent/%q: %v", slug, bot, memd.ErrorMessage(err)))
				continue
			}
			if err := add(id, bot, filepath.Join("projects", slug, "memory", "by-agent", bot)); err != nil {
				return nil, nil, err
			}
		}
	}
	plan := make(map[memd.ShardID][]fact)
	for id, byID := range found {
		if len(byID) == 0 {
			continue
		}
		list := make([]fact, 0, len(byID))
		for _, f := range byID {
			list = append(list, f)
		}
		// Oldest first, so the shard's history reads in the order things
		// were learned; ties in file order.
		sort.SliceStable(list, func(i, j int) bool {
			if list[i].Date != list[j].Date {
				return list[i].Date.Before(list[j].Date)
			}
			if list[i].file != list[j].file {
				return list[i].file < list[j].file
			}
			return list[i].Text < list[j].Text
		})
		plan[id] = list
		rep.Shards[id] = &ShardReport{Found: len(list)}
	}
	if len(plan) == 0 {
		return nil, nil, memd.Errorf(memd.EINVALID, "%s holds no memory: want agents/<bot>/memory, user-memory/by-agent/<bot> or projects/<slug>/memory/by-agent/<bot>, each with profile.md or log/*.md", dir)
	}
	return plan, rep, nil
}

// readScope reads profile.md and the logs (log/YYYY-MM.md, and a split
// month's log/YYYY-MM/DD.md) of one scope folder.
func readScope(dir, root, bot string, rep *Report) ([]fact, error) {
	var out []fact
	files := []string{filepath.Join(root, gitstore.ProfileFile)}
	logs, _ := filepath.Glob(filepath.Join(dir, root, gitstore.LogDir, "*.md"))
	days, _ := filepath.Glob(filepath.Join(dir, root, gitstore.LogDir, "*", "*.md"))
	logs = append(logs, days...)
	slices.Sort(logs)
	for _, l := range logs {
		rel, _ := filepath.Rel(dir, l)
		inScope, _ := filepath.Rel(filepath.Join(dir, root), l)
		// The file's name goes into each commit's trailers: only a log's
		// name is read, never one that could write trailers of its own.
		if !gitstore.IsFactFile(filepath.ToSlash(inScope)) {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%q: not a log (want log/YYYY-MM.md or log/YYYY-MM/DD.md)", filepath.ToSlash(rel)))
			continue
		}
		files = append(files, rel)
	}
	for _, rel := range files {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %v", rel, err))
			continue
		}
		profile := filepath.Base(rel) == gitstore.ProfileFile
		// An editor's byte-order mark at the start would hide the first
		// fact; a file saved so is read as its author meant it.
		text := strings.TrimPrefix(string(data), "\ufeff")
		var fence string
		for n, line := range strings.Split(text, "\n") {
			var code bool
			code, fence = gitstore.InBlock(line, fence)
			f, ok := gitstore.ParseLine(line)
			if !ok {
				// A line that starts like a fact but is not one is said,
				// not passed over as prose.
				if err := gitstore.CheckFactLine(line, code); err != nil {
					rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s:%d: %s", rel, n+1, memd.ErrorMessage(err)))
				}
				continue
			}
			text, err := memd.CleanFactText(f.Text)
			if err != nil {
				rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s:%d: %s", rel, n+1, memd.ErrorMessage(err)))
				continue
			}
			f.Text, f.ID = text, memd.FactID(text)
			switch {
			case f.Tier != "":
			case profile:
				f.Tier = memd.TierProfile
			default:
				f.Tier = memd.TierLog
			}
			out = append(out, fact{Fact: f, bot: bot, file: filepath.ToSlash(rel)})
		}
	}
	return out, nil
}

// subdirs lists the folders in dir, sorted; none if dir is missing.
func subdirs(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// Facts returns the number of distinct facts the plan holds.
func (p *Plan) Facts() int {
	n := 0
	for _, list := range p.shards {
		n += len(list)
	}
	return n
}

// Apply commits the plan into store, a commit per fact the shard does not
// hold yet, and fills in the report. progress, when set, is called after
// each fact.
func (p *Plan) Apply(store *gitstore.Store, progress func(done, total int)) error {
	plan, rep := p.shards, p.Report
	total, done := p.Facts(), 0
	step := func() {
		done++
		if progress != nil {
			progress(done, total)
		}
	}
	ids := make([]memd.ShardID, 0, len(plan))
	for id := range plan {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b memd.ShardID) int { return strings.Compare(a.String(), b.String()) })
	for _, id := range ids {
		sh, err := store.CreateShard(id)
		if err != nil {
			return fmt.Errorf("shard %s: %w", id, err)
		}
		held, _, err := sh.Facts()
		if err != nil {
			return fmt.Errorf("shard %s: %w", id, err)
		}
		have := make(map[string]bool, len(held))
		for _, f := range held {
			have[f.ID] = true
		}
		r := rep.Shards[id]
		for _, f := range plan[id] {
			if have[f.ID] {
				r.Present++
				step()
				continue
			}
			src := memd.Source{Messages: []string{"import:" + f.file}}
			if err := provenance.CheckSource(src); err != nil {
				return fmt.Errorf("import %s: %w", f.file, err)
			}
			msg := provenance.Message(provenance.Subject(memd.OpImport, f.Text), memd.Provenance{
				Op:             memd.OpImport,
				FactIDs:        []string{f.ID},
				Tier:           f.Tier,
				SourceMessages: src.Messages,
				LearnedBy:      memd.LearnedImport,
			})
			res, err := sh.Apply(gitstore.Change{
				Author:  gitstore.Signature{Name: f.bot, Email: f.bot + "@agents.memd"},
				Message: msg,
				Edits:   []gitstore.Edit{{Op: gitstore.AddFact, Fact: f.Fact}},
			})
			if err != nil {
				return fmt.Errorf("import %q into %s: %w", f.Text, id, err)
			}
			if res.Commit.IsZero() {
				r.Present++
			} else {
				r.Imported++
				have[f.ID] = true
			}
			step()
		}
	}
	return nil
}
