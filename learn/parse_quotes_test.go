package learn

import "testing"

func TestParseAnswer_MarksAndQuotesModelsWrite(t *testing.T) {
	for answer, want := range map[string]string{
		"note: 'The teams' budgets are frozen'":     "note:The teams' budgets are frozen",
		"user: 'Drives his parents' car to work'":   "user:Drives his parents' car to work",
		"profile: 'Maintains the users' dashboard'": "profile:Maintains the users' dashboard",
		"profile: ‘Maintains the users’ dashboard’": "profile:Maintains the users’ dashboard",
		"_profile: Uses snake_case_":                "profile:Uses snake_case",
		"**profile:** Uses **pnpm**, not npm":       "profile:Uses **pnpm**, not npm",
		"**profile: Leads the design team**":        "profile:Leads the design team",
		"**profile**: Leads the **design** team":    "profile:Leads the **design** team",
		"_profile_: Uses snake_case_names":          "profile:Uses snake_case_names",
		"*profile:* Likes *Dune*":                   "profile:Likes *Dune*",
		"**profile:** _Leads the design team_":      "profile:Leads the design team",
		"log: 'Moved to the 9 o'clock standup'":     "log:Moved to the 9 o'clock standup",
		"note: 'Prefers 90's music'":                "note:Prefers 90's music",
		"`log: ran `go test` in CI`":                "log:ran `go test` in CI",
		"user: \"Doesn't eat meat\"":                "user:Doesn't eat meat",
	} {
		a := ParseAnswer(answer, MaxAdds, MaxRemoves)
		got := ""
		if len(a.Adds) == 1 {
			got = a.Adds[0].Kind + ":" + a.Adds[0].Text
		}
		if got != want {
			t.Errorf("%s\n    learned %q, want %q", answer, got, want)
		}
	}
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
