package gitstore

import "testing"

// A push is taken as refused for the remote's history (fetch, merge and
// push again) both when git's check refuses it and when another push
// moved the remote's main between that check and the update; a hook's
// refusal, or another failure, is not.
func TestPushRejected(t *testing.T) {
	for _, c := range []struct {
		report string
		want   bool
	}{
		{"To /srv/a.git\n!\t1a2b:refs/heads/main\t[rejected] (fetch first)\nDone\n", true},
		{"To /srv/a.git\n!\t1a2b:refs/heads/main\t[rejected] (non-fast-forward)\nDone\n", true},
		{"To /srv/a.git\n!\t1a2b:refs/heads/main\t[remote rejected] (failed to update ref)\nDone\n", true},
		{"To /srv/a.git\n!\t1a2b:refs/heads/main\t[remote rejected] (pre-receive hook declined)\nDone\n", false},
		{"To /srv/a.git\n!\t1a2b:refs/heads/main\t[remote failure] (remote failed to report status)\nDone\n", false},
		{"To /srv/a.git\n=\t1a2b:refs/heads/main\t[up to date]\nDone\n", false},
	} {
		if got := pushRejected(c.report); got != c.want {
			t.Errorf("pushRejected(%q) = %v, want %v", c.report, got, c.want)
		}
	}
}
