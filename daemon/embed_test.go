package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/daemon/vectors"
	"github.com/memd/memd/internal/conceptembed"
)

// meaningEnv is a daemon with an embeddings endpoint, an admin and alice.
type meaningEnv struct {
	*env
	alice *client.Client
}

// embedded opens a daemon whose embeddings endpoint knows the concepts,
// with facts remembered in alice's shard, each with its vector.
func embedded(t *testing.T, facts []string) (*conceptembed.Server, meaningEnv) {
	t.Helper()
	es := conceptembed.New("concepts")
	t.Cleanup(es.Close)
	e := openWithEmbeddings(t, t.TempDir(), es, "concepts")
	for _, f := range facts {
		remember(t, e.alice, "agent/alice", f, memd.TierLog, memd.Source{})
	}
	e.waitMeaning(t, "every fact embedded", func(m memd.MeaningStatus) bool { return m.Ready && m.Vectors == len(facts) })
	return es, e
}

// openWithEmbeddings opens a daemon on dir embedding through es (none:
// without an endpoint).
func openWithEmbeddings(t *testing.T, dir string, es *conceptembed.Server, model string) meaningEnv {
	t.Helper()
	var cfg daemon.Config
	if es != nil {
		cfg.Embeddings = &vectors.Config{BaseURL: es.URL + "/v1", Model: model, Batch: 4}
	}
	e := meaningEnv{env: startQuietIn(t, dir, cfg)}
	// alice is added at the first start; later ones use the admin alone.
	if a, err := e.admin.AddAgent(context.Background(), "alice", nil); err == nil {
		e.alice = client.New(e.d.URL(), a.Token)
	} else if memd.ErrorCode(err) != memd.ECONFLICT {
		t.Fatal(err)
	}
	return e
}

// waitMeaning waits until the status of recall by meaning satisfies ok.
func (e meaningEnv) waitMeaning(t *testing.T, what string, ok func(memd.MeaningStatus) bool) memd.MeaningStatus {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := e.admin.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Meaning == nil {
			t.Fatal("status says nothing of recall by meaning")
		}
		if ok(*st.Meaning) {
			return *st.Meaning
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %+v", what, *st.Meaning)
		}
		time.Sleep(5 * time.Millisecond) // polling the status, not timing
	}
}

func embeddedTexts(es *conceptembed.Server) []string {
	var out []string
	for _, c := range es.Calls() {
		out = append(out, c...)
	}
	return out
}

var meaningFacts = []string{
	"Booked a flight to Lisbon for the March offsite",
	"Adopted a puppy named Rex from the shelter",
	"Renewed the office lease for two years",
	"Booked a hotel in Lisbon for three nights",
	"Paid the invoice for the conference",
	"The intern starts on Monday",
}

// With an endpoint, recall finds facts that share no word with the query,
// through their vectors, computed once per fact in the background.
func TestRecall_FindsByMeaning(t *testing.T) {
	es, e := embedded(t, meaningFacts)
	ctx := context.Background()
	st := e.waitMeaning(t, "every fact embedded", func(m memd.MeaningStatus) bool { return m.Ready && m.Vectors == len(meaningFacts) })
	if st.Model != "concepts" || st.Pending != 0 || st.LastError != "" {
		t.Errorf("status %+v", st)
	}
	for q, want := range map[string]string{"plane ticket": meaningFacts[0], "new dog": meaningFacts[1]} {
		res, err := e.alice.Recall(ctx, memd.RecallQuery{Q: q, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || res.Hits[0].Text != want {
			t.Errorf("%q: %v, want %q first", q, hitTexts(res), want)
			continue
		}
		if res.ByWordsAlone != "" || res.Hits[0].Explain == nil || res.Hits[0].Explain.Semantic <= 0 {
			t.Errorf("%q: by words alone %q, explain %+v", q, res.ByWordsAlone, res.Hits[0].Explain)
		}
	}
	// Words still count: the hotel shares "Lisbon" and the query's meaning.
	res, _ := e.alice.Recall(ctx, memd.RecallQuery{Q: "accommodation in Lisbon"})
	if len(res.Hits) == 0 || res.Hits[0].Text != meaningFacts[3] {
		t.Errorf("accommodation in Lisbon: %v", hitTexts(res))
	}
	// Each fact text was embedded once; recall embeds only its query.
	var factTexts []string
	for _, text := range embeddedTexts(es) {
		if slices.Contains(meaningFacts, text) {
			factTexts = append(factTexts, text)
		}
	}
	if len(factTexts) != len(meaningFacts) {
		t.Errorf("fact texts embedded %d times, want each once: %q", len(factTexts), factTexts)
	}
	// Bob reads none of alice's facts, by words or by meaning.
	b, _ := e.admin.AddAgent(ctx, "bob", nil)
	res, err := client.New(e.d.URL(), b.Token).Recall(ctx, memd.RecallQuery{Q: "plane ticket"})
	if err != nil || len(res.Hits) != 0 {
		t.Errorf("bob found %v (%v)", hitTexts(res), err)
	}
}

// Until every fact has its vector, recall answers by words and says why;
// a failing endpoint is retried, shown in the status, and recovered from.
func TestRecall_ByWordsUntilTheVectorsAreReady(t *testing.T) {
	// The facts are there before the endpoint is.
	dir := t.TempDir()
	e := openWithEmbeddings(t, dir, nil, "")
	for _, f := range meaningFacts {
		remember(t, e.alice, "agent/alice", f, memd.TierLog, memd.Source{})
	}
	if err := e.d.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	alice := e.alice

	es := conceptembed.New("concepts")
	defer es.Close()
	es.Fail(true)
	e = openWithEmbeddings(t, dir, es, "concepts")
	e.alice = client.New(e.d.URL(), alice.Token)
	ctx := context.Background()
	st := e.waitMeaning(t, "a failure shown", func(m memd.MeaningStatus) bool { return m.Failures > 0 })
	if st.Ready || st.Pending != len(meaningFacts) || !strings.Contains(st.LastError, "503") {
		t.Errorf("status while failing: %+v", st)
	}
	// An agent is told how far recall by meaning is, not the store's
	// counts nor an error that names the endpoint.
	if mine, err := e.alice.Status(ctx); err != nil || mine.Meaning == nil || mine.Meaning.Model != "concepts" || mine.Meaning.Ready ||
		mine.Meaning.Pending != 0 || mine.Meaning.Failures != 0 || mine.Meaning.LastError != "" {
		t.Errorf("alice's status while failing: %+v, %v", mine.Meaning, err)
	}
	res, err := e.alice.Recall(ctx, memd.RecallQuery{Q: "flight Lisbon"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Text != meaningFacts[0] || !strings.Contains(res.ByWordsAlone, "being computed") {
		t.Errorf("recall while the vectors are missing: %v, by words alone %q", hitTexts(res), res.ByWordsAlone)
	}
	es.Fail(false)
	st = e.waitMeaning(t, "the vectors", func(m memd.MeaningStatus) bool { return m.Ready })
	if st.LastError != "" || st.Vectors != len(meaningFacts) {
		t.Errorf("status after recovering: %+v", st)
	}
	res, _ = e.alice.Recall(ctx, memd.RecallQuery{Q: "plane ticket"})
	if res.ByWordsAlone != "" || len(res.Hits) == 0 || res.Hits[0].Text != meaningFacts[0] {
		t.Errorf("recall once ready: %v, by words alone %q", hitTexts(res), res.ByWordsAlone)
	}
	// The endpoint failing for a query leaves recall answering by words.
	es.Fail(true)
	res, err = e.alice.Recall(ctx, memd.RecallQuery{Q: "flight Lisbon"})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Text != meaningFacts[0] || !strings.Contains(res.ByWordsAlone, "503") {
		t.Errorf("recall with the endpoint down: %v, by words alone %q (%v)", hitTexts(res), res.ByWordsAlone, err)
	}
}

// embeddedAndStopped opens a daemon on dir with es, has alice remember
// meaningFacts, waits until each has its vector, and stops the daemon.
func embeddedAndStopped(t *testing.T, dir string, es *conceptembed.Server) meaningEnv {
	t.Helper()
	e := openWithEmbeddings(t, dir, es, es.Model)
	for _, f := range meaningFacts {
		remember(t, e.alice, "agent/alice", f, memd.TierLog, memd.Source{})
	}
	e.waitMeaning(t, "every fact embedded", func(m memd.MeaningStatus) bool { return m.Ready && m.Vectors == len(meaningFacts) })
	if err := e.d.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

// Vectors are kept across restarts, one file per model: a restart embeds
// nothing again, and another model embeds everything for itself.
func TestRecall_VectorsKeptPerModel(t *testing.T) {
	dir := t.TempDir()
	es := conceptembed.New("concepts")
	defer es.Close()
	embeddedAndStopped(t, dir, es)
	before := len(embeddedTexts(es))

	e := openWithEmbeddings(t, dir, es, "concepts")
	st := e.waitMeaning(t, "the vectors read back", func(m memd.MeaningStatus) bool { return m.Ready })
	if st.Vectors != len(meaningFacts) || len(embeddedTexts(es)) != before {
		t.Errorf("after a restart: %d vectors, %d texts embedded again", st.Vectors, len(embeddedTexts(es))-before)
	}
	e.d.Shutdown(context.Background())

	other := conceptembed.New("concepts-2")
	defer other.Close()
	e = openWithEmbeddings(t, dir, other, "concepts-2")
	st = e.waitMeaning(t, "the new model's vectors", func(m memd.MeaningStatus) bool { return m.Ready })
	if st.Model != "concepts-2" || st.Vectors != len(meaningFacts) || len(embeddedTexts(other)) != len(meaningFacts) {
		t.Errorf("after a model change: %+v, %d texts embedded", st, len(embeddedTexts(other)))
	}
	files, _ := filepath.Glob(filepath.Join(dir, "vectors-*.bin"))
	if len(files) != 2 {
		t.Errorf("vector files %v, want one per model", files)
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// memd serves while the vectors are read from their file (a million take
// seconds): recall answers by words alone and says why, and by meaning
// once they are read; none is computed again.
func TestRecall_ByWordsWhileTheVectorsAreRead(t *testing.T) {
	dir := t.TempDir()
	es := conceptembed.New("concepts")
	defer es.Close()
	e := embeddedAndStopped(t, dir, es)
	before := len(embeddedTexts(es))
	token := e.alice.Token

	release := make(chan struct{})
	daemon.HoldVectorsRead(t, release)
	e = openWithEmbeddings(t, dir, es, "concepts")
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	t.Cleanup(let) // before the daemon stops, which waits for the read
	ctx := context.Background()
	alice := client.New(e.d.URL(), token)
	res, err := alice.Recall(ctx, memd.RecallQuery{Q: "Lisbon"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || !strings.Contains(res.ByWordsAlone, "being read") {
		t.Errorf("while the vectors are read: %v, by words alone %q", hitTexts(res), res.ByWordsAlone)
	}
	if st, err := e.admin.Status(ctx); err != nil || st.Meaning == nil || st.Meaning.Ready || !st.Meaning.Reading {
		t.Errorf("status while the vectors are read: %+v, %v", st.Meaning, err)
	}
	let()
	e.waitMeaning(t, "the vectors read", func(m memd.MeaningStatus) bool { return m.Ready })
	res, err = alice.Recall(ctx, memd.RecallQuery{Q: "plane ticket"})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Text != meaningFacts[0] || res.ByWordsAlone != "" {
		t.Errorf("once read: %v, by words alone %q (%v)", hitTexts(res), res.ByWordsAlone, err)
	}
	if again := len(embeddedTexts(es)) - before; again > 1 { // the query's
		t.Errorf("%d texts embedded again", again)
	}
}

// A vectors file changed under memd (copied over in place) is never
// ranked by: recall answers by words alone and says why.
func TestRecall_ByWordsWhenTheVectorsFileChanged(t *testing.T) {
	dir := t.TempDir()
	es := conceptembed.New("concepts")
	defer es.Close()
	token := embeddedAndStopped(t, dir, es).alice.Token
	e := openWithEmbeddings(t, dir, es, "concepts")
	e.waitMeaning(t, "the vectors read back", func(m memd.MeaningStatus) bool { return m.Ready })
	ctx := context.Background()
	alice := client.New(e.d.URL(), token)
	if res, err := alice.Recall(ctx, memd.RecallQuery{Q: "plane ticket"}); err != nil || res.ByWordsAlone != "" {
		t.Fatalf("before the change: by words alone %q (%v)", res.ByWordsAlone, err)
	}
	path := daemon.VectorsFile(dir, "concepts")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(data) / 2; i < len(data); i++ {
		data[i] ^= 0x5a
	}
	if err := os.WriteFile(path, data, 0o600); err != nil { // the same file, in place
		t.Fatal(err)
	}
	res, err := alice.Recall(ctx, memd.RecallQuery{Q: "plane ticket"})
	if err != nil || !strings.Contains(res.ByWordsAlone, "could not be read") {
		t.Errorf("after the change: %v, by words alone %q (%v)", hitTexts(res), res.ByWordsAlone, err)
	}
}

// A store that starts empty is not taken for one whose facts all have
// vectors: facts that arrive while the endpoint fails are found by words,
// and the answer says so.
func TestRecall_NewFactsWithoutVectorsAreNotReady(t *testing.T) {
	es := conceptembed.New("concepts")
	defer es.Close()
	e := openWithEmbeddings(t, t.TempDir(), es, "concepts")
	e.waitMeaning(t, "the first look", func(m memd.MeaningStatus) bool { return m.Ready })
	es.Fail(true)
	for _, f := range meaningFacts {
		remember(t, e.alice, "agent/alice", f, memd.TierLog, memd.Source{})
	}
	e.waitMeaning(t, "a failure", func(m memd.MeaningStatus) bool { return m.Failures > 0 && m.Pending > 0 && !m.Ready })
	res, err := e.alice.Recall(context.Background(), memd.RecallQuery{Q: "flight Lisbon"})
	if err != nil || !strings.Contains(res.ByWordsAlone, "being computed") || len(res.Hits) == 0 || res.Hits[0].Text != meaningFacts[0] {
		t.Errorf("recall: %v, by words alone %q (%v)", hitTexts(res), res.ByWordsAlone, err)
	}
}

// A text the endpoint will not take, refused or answered with a vector no
// float32 holds, holds back no other fact: it is found by words alone and
// counted in the status.
func TestRecall_ATextTheEndpointRefusesHoldsBackNoOther(t *testing.T) {
	for _, how := range []string{"refused", "garbage"} {
		t.Run(how, func(t *testing.T) {
			es := conceptembed.New("concepts")
			defer es.Close()
			if how == "refused" {
				es.Refuse("puppy")
			} else {
				es.Garbage("puppy")
			}
			e := openWithEmbeddings(t, t.TempDir(), es, "concepts")
			for _, f := range meaningFacts {
				remember(t, e.alice, "agent/alice", f, memd.TierLog, memd.Source{})
			}
			st := e.waitMeaning(t, "the other facts", func(m memd.MeaningStatus) bool { return m.Vectors == len(meaningFacts)-1 && m.Ready })
			if st.Refused != 1 || st.Pending != 0 {
				t.Errorf("status %+v, want one fact refused", st)
			}
			ctx := context.Background()
			res, _ := e.alice.Recall(ctx, memd.RecallQuery{Q: "plane ticket"})
			if len(res.Hits) == 0 || res.Hits[0].Text != meaningFacts[0] || res.ByWordsAlone != "" {
				t.Errorf("plane ticket: %v (%q)", hitTexts(res), res.ByWordsAlone)
			}
			res, _ = e.alice.Recall(ctx, memd.RecallQuery{Q: "puppy"})
			if len(res.Hits) == 0 || res.Hits[0].Text != meaningFacts[1] {
				t.Errorf("the refused fact by its words: %v", hitTexts(res))
			}
		})
	}
}

// Forgetting a fact forgets its vector; a lone fact is found by meaning.
func TestRecall_VectorsFollowTheFacts(t *testing.T) {
	es := conceptembed.New("concepts")
	defer es.Close()
	e := openWithEmbeddings(t, t.TempDir(), es, "concepts")
	ctx := context.Background()
	lease := remember(t, e.alice, "agent/alice", "Signed the lease", memd.TierLog, memd.Source{})
	e.waitMeaning(t, "the vector", func(m memd.MeaningStatus) bool { return m.Ready && m.Vectors == 1 })
	res, _ := e.alice.Recall(ctx, memd.RecallQuery{Q: "apartment"})
	if len(res.Hits) != 1 || res.Hits[0].Text != "Signed the lease" {
		t.Errorf("apartment, one fact in the shard: %v (%q)", hitTexts(res), res.ByWordsAlone)
	}
	var ids []string
	for _, f := range meaningFacts {
		ids = append(ids, remember(t, e.alice, "agent/alice", f, memd.TierLog, memd.Source{}).Fact.ID)
	}
	e.waitMeaning(t, "the vectors", func(m memd.MeaningStatus) bool { return m.Vectors == 1+len(meaningFacts) })
	for _, id := range append(ids[:3], lease.Fact.ID) {
		if _, err := e.alice.Forget(ctx, memd.ForgetRequest{Shard: memd.AgentShard("alice"), ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	e.waitMeaning(t, "the vectors of facts forgotten gone", func(m memd.MeaningStatus) bool { return m.Vectors == len(meaningFacts)-3 })
}

// A text refused when it is the only one to embed is told from an endpoint
// refusing everything, and a query refused holds back no other query.
func TestRecall_ARefusedTextAloneAndARefusedQuery(t *testing.T) {
	es, e := embedded(t, meaningFacts[:3])
	ctx := context.Background()
	es.Refuse("Rex")
	remember(t, e.alice, "agent/alice", meaningFacts[1]+" Rex", memd.TierLog, memd.Source{})
	st := e.waitMeaning(t, "the text refused", func(m memd.MeaningStatus) bool { return m.Refused == 1 })
	if !st.Ready || st.Pending != 0 {
		t.Errorf("status %+v", st)
	}
	res, _ := e.alice.Recall(ctx, memd.RecallQuery{Q: "Rex"})
	if !strings.Contains(res.ByWordsAlone, "refused") {
		t.Errorf("a refused query: by words alone %q", res.ByWordsAlone)
	}
	res, _ = e.alice.Recall(ctx, memd.RecallQuery{Q: "plane ticket"})
	if res.ByWordsAlone != "" || len(res.Hits) == 0 || res.Hits[0].Text != meaningFacts[0] {
		t.Errorf("the next query: %v, by words alone %q", hitTexts(res), res.ByWordsAlone)
	}
}

// The same model name answering with other dimensions, with no new fact
// to embed: recall notices, and every vector is computed again.
func TestRecall_VectorsOfOtherDimensionsAreComputedAgain(t *testing.T) {
	es, e := embedded(t, meaningFacts)
	ctx := context.Background()
	es.Dims(len(conceptembed.Concepts)) // the topics, without the other words
	res, _ := e.alice.Recall(ctx, memd.RecallQuery{Q: "plane ticket"})
	if !strings.Contains(res.ByWordsAlone, "computed again") {
		t.Errorf("by words alone %q", res.ByWordsAlone)
	}
	e.waitMeaning(t, "the vectors again", func(m memd.MeaningStatus) bool { return m.Ready && m.Vectors == len(meaningFacts) })
	res, _ = e.alice.Recall(ctx, memd.RecallQuery{Q: "plane ticket"})
	if res.ByWordsAlone != "" || len(res.Hits) == 0 || res.Hits[0].Text != meaningFacts[0] {
		t.Errorf("after: %v, by words alone %q", hitTexts(res), res.ByWordsAlone)
	}
}

// An endpoint that takes fewer texts a request than memd sends gets
// smaller requests, not one text at a time and a failure each.
func TestRecall_SmallerBatchesForAnEndpointThatTakesFewer(t *testing.T) {
	es := conceptembed.New("concepts")
	defer es.Close()
	es.MostTexts(2)
	dir := t.TempDir()
	e := openWithEmbeddings(t, dir, nil, "")
	for _, f := range meaningFacts {
		remember(t, e.alice, "agent/alice", f, memd.TierLog, memd.Source{})
	}
	e.d.Shutdown(context.Background())
	e = openWithEmbeddings(t, dir, es, "concepts") // batches of 4
	st := e.waitMeaning(t, "the vectors", func(m memd.MeaningStatus) bool { return m.Ready && m.Vectors == len(meaningFacts) })
	if st.Refused != 0 {
		t.Errorf("status %+v", st)
	}
	for _, c := range es.Calls() {
		if len(c) == 1 {
			t.Errorf("a request of one text: %q", c)
		}
	}
}
