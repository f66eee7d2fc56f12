package memd

import "context"

// Reviewer is the service's door to review mode: the changes a model made
// for an agent in review mode wait on their shard's branch proposed until
// a person accepts them into main or rejects them.
type Reviewer interface {
	// SetReview turns review mode on or off for an agent (admins only).
	SetReview(ctx context.Context, agent string, on bool) (Agent, error)
	// Proposals lists the proposals waiting in a shard, oldest first, or,
	// for the admin, in every shard when shard is zero.
	Proposals(ctx context.Context, shard ShardID) ([]Proposal, error)
	// Review accepts or rejects proposals (admins only).
	Review(ctx context.Context, req ReviewRequest) (ReviewResult, error)
}

// Proposal is one change waiting for review: its commit on the branch
// proposed, with provenance and fact changes. Its ID stays the same when
// memd rebuilds the branch on a newer main; its commit does not.
type Proposal struct {
	ID     string `json:"id"`
	Commit Commit `json:"commit"`
	// Messages quotes the exchange it was learned from, as memd kept it.
	Messages []Quote `json:"messages,omitempty"`
}

// Verdicts of a review.
const (
	ReviewAccept = "accept"
	ReviewReject = "reject"
)

// ReviewRequest accepts or rejects proposals: those named by ID (or a
// prefix of one), or All of them, in one shard or, when Shard is zero,
// wherever they are.
type ReviewRequest struct {
	Verdict string   `json:"verdict"`
	Shard   ShardID  `json:"shard,omitzero"`
	IDs     []string `json:"ids,omitempty"`
	All     bool     `json:"all,omitempty"`
	// Reviewer names the person in the Reviewed-By trailer; the caller's
	// name when empty.
	Reviewer string `json:"reviewer,omitempty"`
}

// Reviewed is what became of one proposal: for an accepted one, the commit
// on main; for a rejected one, the record under refs/memd/rejected. Commit
// is empty when main already held the change.
type Reviewed struct {
	ID       string  `json:"id"`
	Shard    ShardID `json:"shard"`
	Subject  string  `json:"subject"`
	Proposal string  `json:"proposal"` // its commit on proposed
	Commit   string  `json:"commit,omitempty"`
}

// ReviewResult lists the proposals reviewed.
type ReviewResult struct {
	Verdict  string     `json:"verdict"`
	Reviewed []Reviewed `json:"reviewed"`
}

// ReviewStatus counts proposals: waiting, and reviewed since memd started
// (accepted through memd or by a person's git merge; rejected ever, from
// the records in the shards).
type ReviewStatus struct {
	Pending  int `json:"pending"`
	Accepted int `json:"accepted"`
	Rejected int `json:"rejected"`
}
