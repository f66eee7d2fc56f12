package learn

import (
	"testing"
	"time"

	"github.com/memd/memd"
)

// Realistic model answers, each with the one fact it states.
func TestParseAnswer_RealisticMarks(t *testing.T) {
	for answer, want := range map[string]string{
		"- **log**: Released **v2.0**":                     "log:Released **v2.0**",
		"- **profile**: **Go** is the main language":       "profile:**Go** is the main language",
		"**profile**: **Leads the design team**":           "profile:Leads the design team",
		"*note*: Likes *Dune*":                             "note:Likes *Dune*",
		"`log`: Ran `make test`":                           "log:Ran `make test`",
		"**log:** Shipped **v2**":                          "log:Shipped **v2**",
		"1. **profile:** Uses `pnpm`":                      "profile:Uses `pnpm`",
		"- **profile:** *Leads the design team*":           "profile:Leads the design team",
		"note: 'Doesn't eat meat'":                         "note:Doesn't eat meat",
		"***profile:*** Likes tea":                         "profile:Likes tea",
		"**log:** `make test` now passes":                  "log:`make test` now passes",
		"- **user**: Prefers \"Dune\" over \"Foundation\"": "user:Prefers \"Dune\" over \"Foundation\"",
		"note: 'The teams' budgets are frozen'":            "note:The teams' budgets are frozen",
		"user: 'Drives his parents' car to work'":          "user:Drives his parents' car to work",
		"profile: 'Maintains the users' dashboard'":        "profile:Maintains the users' dashboard",
		"profile: ‘Maintains the users’ dashboard’":        "profile:Maintains the users’ dashboard",
		"_profile: Uses snake_case_":                       "profile:Uses snake_case",
		"**profile:** Uses **pnpm**, not npm":              "profile:Uses **pnpm**, not npm",
		"**profile: Leads the design team**":               "profile:Leads the design team",
		"**profile**: Leads the **design** team":           "profile:Leads the **design** team",
		"_profile_: Uses snake_case_names":                 "profile:Uses snake_case_names",
		"*profile:* Likes *Dune*":                          "profile:Likes *Dune*",
		"**profile:** _Leads the design team_":             "profile:Leads the design team",
		"log: 'Moved to the 9 o'clock standup'":            "log:Moved to the 9 o'clock standup",
		"note: 'Prefers 90's music'":                       "note:Prefers 90's music",
		"`log: ran `go test` in CI`":                       "log:ran `go test` in CI",
		"user: \"Doesn't eat meat\"":                       "user:Doesn't eat meat",
	} {
		a := ParseAnswer(answer, MaxAdds, MaxRemoves)
		got := ""
		if len(a.Adds) == 1 {
			got = a.Adds[0].Kind + ":" + a.Adds[0].Text
		}
		if got != want {
			t.Errorf("%s\n    learned %q (ignored %d), want %q", answer, got, a.Ignored, want)
		}
	}
}

// Removals quoted the way models copy a known fact: the label, the date,
// marks and quotes around it, apostrophes within it.
func TestParseAnswer_RemovalQuotes(t *testing.T) {
	for answer, want := range map[string]Quote{
		"remove: **[user] Prefers tea**":                 {Text: "Prefers tea", User: true},
		"remove: \"**[user] Prefers tea**\"":             {Text: "Prefers tea", User: true},
		"remove: - (2026-01-30) [user] Prefers tea":      {Text: "Prefers tea", User: true},
		"remove: [user]: Prefers tea":                    {Text: "Prefers tea", User: true},
		"remove: '(2026-01-30) [user] Doesn't eat meat'": {Text: "Doesn't eat meat", User: true},
		"remove: (2026-01-30) 'Uses the teams' board'":   {Text: "Uses the teams' board"},
	} {
		a := ParseAnswer(answer, MaxAdds, MaxRemoves)
		var got Quote
		if len(a.Removes) == 1 {
			got = a.Removes[0]
		}
		if got != want {
			t.Errorf("%s\n    quoted %+v, want %+v", answer, got, want)
		}
	}
}

// A removal quoted the way real models copy a labelled fact.
func TestPlanOf_RemovalsTheModelLabelled(t *testing.T) {
	pat, alice := memd.UserShard("pat"), memd.AgentShard("alice")
	d, _ := memd.ParseDate("2026-01-30")
	fact := func(s memd.ShardID, text string) memd.Fact {
		return memd.Fact{ID: memd.FactID(text), Shard: s, Text: text, Date: d, Tier: memd.TierProfile}
	}
	known := []memd.Fact{fact(alice, "Prefers tea"), fact(pat, "Prefers tea")}
	ex := memd.Exchange{Agent: "alice", User: "pat", ChatKind: memd.ChatDirect, Time: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)}
	for _, answer := range []string{
		"remove: \"[user] Prefers tea\"",
		"remove: [user] \"Prefers tea\"",
		"- **remove**: (2026-01-30) [user] Prefers tea",
		"remove: `(2026-01-30) [user] Prefers tea`",
		"remove: (2026-01-30) [user] **Prefers tea**",
		"remove: [User] Prefers tea",
		"remove: [user] (2026-01-30) Prefers tea",
		"remove: **[user]** Prefers tea",
	} {
		p := planOf(ex, known, ParseAnswer(answer, MaxAdds, MaxRemoves), "m")
		if len(p.Steps) != 1 || p.Steps[0].Shard != pat {
			t.Errorf("%s: plan %+v, want the removal of pat's fact", answer, p.Steps)
		}
	}
}

func TestValidate_ExchangeYears(t *testing.T) {
	for s, ok := range map[string]bool{
		"0000-01-01T00:00:00Z":      true,
		"9999-12-31T23:59:59Z":      true,
		"9999-12-31T20:00:00-05:00": false,
		"0000-01-01T00:30:00+01:00": false,
		"2026-03-01T10:00:00+14:00": true,
	} {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		ex := memd.Exchange{Agent: "alice", Chat: "c1", ChatKind: memd.ChatGroup, Time: tm,
			Messages: []memd.Message{{ID: "m1", Role: "user", Text: "hi there"}}}
		err = validate(&ex, time.Now)
		if (err == nil) != ok {
			t.Errorf("%s: %v, want ok=%v", s, err, ok)
		}
	}
}
