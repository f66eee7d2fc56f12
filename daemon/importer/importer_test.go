package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memd/memd"
)

// A line that starts like a fact but is not one is listed with why, not
// passed over as prose; a file saved with a byte-order mark keeps its
// first fact; and a fact one bot holds as lasting stays lasting when
// another logged it later.
func TestRead_SaysWhatItSkipsAndKeepsWhatIsLasting(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		full := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("agents/ada/memory/profile.md", "\ufeff- (2026-01-10) Speaks Portuguese\n- (2026-01-11) Likes tea\n")
	write("agents/ada/memory/log/2026-02.md", "# February\n"+
		"- (2026-02-30) Never was\n"+
		"- (2026-13-01) Nor this\n"+
		"- (2026-02-07) \n"+
		"- (2026-02-01) Speaks Portuguese\n"+
		"- (2026-02-02) Booked a flight\n"+
		"* (2026-02-03) Written as Markdown allows\n"+
		"- (2026-02-04 No bracket\n")
	plan, err := Read(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	skipped := strings.Join(plan.Report.Skipped, "\n")
	for _, want := range []string{"log/2026-02.md:2:", "log/2026-02.md:3:", "log/2026-02.md:4:", `log/2026-02.md:7: "* (2026-02-03) Written as Markdown allows" is not read as a fact`, `log/2026-02.md:8: a fact line is "- (YYYY-MM-DD) text"; "- (2026-02-04 No bracket" has no ")"`} {
		if !strings.Contains(skipped, want) {
			t.Errorf("skipped lines do not name %s:\n%s", want, skipped)
		}
	}
	got := make(map[string]memd.Fact)
	for _, f := range plan.shards[memd.AgentShard("ada")] {
		got[f.Text] = f.Fact
	}
	if len(got) != 3 {
		t.Errorf("facts: %+v", got)
	}
	if f := got["Speaks Portuguese"]; f.Tier != memd.TierProfile || f.Date.String() != "2026-02-01" {
		t.Errorf("Speaks Portuguese: %s %s, want profile, dated as last written", f.Tier, f.Date)
	}
	if f := got["Booked a flight"]; f.Tier != memd.TierLog {
		t.Errorf("Booked a flight: %s", f.Tier)
	}
}
