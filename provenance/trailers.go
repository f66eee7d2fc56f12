// Package provenance reads and writes where memory came from. Every commit
// memd makes carries git trailers naming the operation, the fact, the chat
// messages it was learned from and how; this package formats them, parses
// them back, traces a fact to the commit that introduced it, and undoes
// commits semantically: one commit, or every commit citing a message.
package provenance

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memd/memd"
)

// Trailer keys, in the order memd writes them.
const (
	KeyOp        = "Memory-Op"
	KeyFactID    = "Fact-Id"
	KeyTier      = "Tier"
	KeyMessage   = "Source-Message"
	KeyChat      = "Source-Chat"
	KeyChatKind  = "Chat-Kind"
	KeyLearnedBy = "Learned-By"
	KeyModel     = "Model"
	KeyPrompt    = "Prompt"
	KeyReverts   = "Reverts"
	KeyReplaces  = "Replaces"
	KeyEvidence  = "Evidence"
	KeyApproved  = "Approved-By"
	KeyReviewed  = "Reviewed-By"
	KeyRejects   = "Rejects"
	KeyMerged    = "Merged"
	KeyConflict  = "Conflict"
)

// MaxMessages bounds the Source-Message trailers of one change as its
// caller gives them.
const MaxMessages = 100

// MaxInherited bounds the Source-Message trailers a change carries over
// from the facts it rewrites (an edit, a synthesis merge): every message
// behind them, so that a revert by any of them finds the change (an
// episode alone cites up to 300), yet a merge of merges keeps a commit
// message git and a person can read.
const MaxInherited = 2000

// maxSubject is where a subject's fact text is cut.
const maxSubject = 72

// maxValue bounds a trailer value (a message or chat ID, a model name).
const maxValue = 200

// CheckSource validates the parts of a source that become trailers: IDs of
// at most 200 printable characters on one line, and at most 100 messages.
func CheckSource(src memd.Source) error {
	if len(src.Messages) > MaxMessages {
		return memd.Errorf(memd.EINVALID, "at most %d source messages per change, got %d", MaxMessages, len(src.Messages))
	}
	for _, m := range src.Messages {
		if err := checkValue("source message ID", m); err != nil {
			return err
		}
	}
	if src.Chat != "" {
		if err := checkValue("source chat ID", src.Chat); err != nil {
			return err
		}
	}
	_, err := memd.ParseChatKind(string(src.ChatKind))
	return err
}

// CheckModel validates a model name for the Model trailer.
func CheckModel(model string) error {
	if model == "" {
		return nil
	}
	return checkValue("model name", model)
}

// CheckTrailer validates a value for a trailer: what names it in the error.
func CheckTrailer(what, v string) error { return checkValue(what, v) }

func checkValue(what, v string) error {
	if v == "" || strings.TrimSpace(v) != v {
		return memd.Errorf(memd.EINVALID, "%s %q must be non-empty without surrounding spaces", what, v)
	}
	if utf8.RuneCountInString(v) > maxValue {
		return memd.Errorf(memd.EINVALID, "%s is longer than %d characters", what, maxValue)
	}
	if !utf8.ValidString(v) {
		return memd.Errorf(memd.EINVALID, "%s is not valid UTF-8", what)
	}
	for _, r := range v {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return memd.Errorf(memd.EINVALID, "%s contains the control character %U", what, r)
		}
	}
	return nil
}

// quotePath writes a file's path for a trailer: as it is, however long,
// unless a trailer line cannot hold it (a control character, surrounding
// spaces, a leading quote), then quoted as Go and git quote names.
func quotePath(path string) string {
	plain := path != "" && strings.TrimSpace(path) == path && !strings.HasPrefix(path, `"`) && utf8.ValidString(path) &&
		!strings.ContainsFunc(path, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' })
	if plain {
		return path
	}
	return strconv.Quote(path)
}

func unquotePath(v string) string {
	if strings.HasPrefix(v, `"`) {
		if path, err := strconv.Unquote(v); err == nil {
			return path
		}
	}
	return v
}

// Subject returns a commit subject: "<op>: <text cut to ~72 characters>".
func Subject(op, text string) string {
	// A person's line may hold what a commit message may not (bytes that
	// are not UTF-8, a NUL): its forget or edit is still a commit.
	text = strings.Map(func(r rune) rune {
		if r == 0 || unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(text, "\uFFFD"))
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > maxSubject {
		text = strings.TrimSpace(string(r[:maxSubject-1])) + "…"
	}
	return op + ": " + text
}

// Message returns a full commit message: the subject, a blank line and the
// trailers of p. Values must have been checked with CheckSource/CheckModel.
func Message(subject string, p memd.Provenance) string {
	var b strings.Builder
	b.WriteString(subject)
	b.WriteString("\n\n")
	add := func(k, v string) {
		if v != "" {
			b.WriteString(k + ": " + v + "\n")
		}
	}
	add(KeyOp, p.Op)
	for _, id := range p.FactIDs {
		add(KeyFactID, id)
	}
	add(KeyTier, string(p.Tier))
	for _, m := range p.SourceMessages {
		add(KeyMessage, m)
	}
	add(KeyChat, p.SourceChat)
	add(KeyChatKind, string(p.ChatKind))
	add(KeyLearnedBy, p.LearnedBy)
	add(KeyModel, p.Model)
	add(KeyPrompt, p.Prompt)
	add(KeyReverts, p.Reverts)
	add(KeyReplaces, p.Replaces)
	for _, id := range p.Evidence {
		add(KeyEvidence, id)
	}
	add(KeyApproved, p.ApprovedBy)
	add(KeyReviewed, p.ReviewedBy)
	add(KeyRejects, p.Rejects)
	add(KeyMerged, p.Merged)
	for _, path := range p.Conflicts {
		add(KeyConflict, path)
	}
	return b.String()
}

// readers sets what each trailer says, by its key in lower case: git's
// trailer keys are case-insensitive.
var readers = map[string]func(p *memd.Provenance, v string){
	strings.ToLower(KeyOp):        func(p *memd.Provenance, v string) { p.Op = v },
	strings.ToLower(KeyFactID):    func(p *memd.Provenance, v string) { p.FactIDs = append(p.FactIDs, v) },
	strings.ToLower(KeyTier):      func(p *memd.Provenance, v string) { p.Tier = memd.Tier(v) },
	strings.ToLower(KeyMessage):   func(p *memd.Provenance, v string) { p.SourceMessages = append(p.SourceMessages, v) },
	strings.ToLower(KeyChat):      func(p *memd.Provenance, v string) { p.SourceChat = v },
	strings.ToLower(KeyChatKind):  func(p *memd.Provenance, v string) { p.ChatKind = memd.ChatKind(v) },
	strings.ToLower(KeyLearnedBy): func(p *memd.Provenance, v string) { p.LearnedBy = v },
	strings.ToLower(KeyModel):     func(p *memd.Provenance, v string) { p.Model = v },
	strings.ToLower(KeyPrompt):    func(p *memd.Provenance, v string) { p.Prompt = v },
	strings.ToLower(KeyReverts):   func(p *memd.Provenance, v string) { p.Reverts = v },
	strings.ToLower(KeyReplaces):  func(p *memd.Provenance, v string) { p.Replaces = v },
	strings.ToLower(KeyEvidence):  func(p *memd.Provenance, v string) { p.Evidence = append(p.Evidence, v) },
	strings.ToLower(KeyApproved):  func(p *memd.Provenance, v string) { p.ApprovedBy = v },
	strings.ToLower(KeyReviewed):  func(p *memd.Provenance, v string) { p.ReviewedBy = v },
	strings.ToLower(KeyRejects):   func(p *memd.Provenance, v string) { p.Rejects = v },
	strings.ToLower(KeyMerged):    func(p *memd.Provenance, v string) { p.Merged = v },
	strings.ToLower(KeyConflict):  func(p *memd.Provenance, v string) { p.Conflicts = append(p.Conflicts, unquotePath(v)) },
}

// Parse reads the trailers of a commit message: the key-value lines of its
// last paragraph, as git interpret-trailers does. A message without memd's
// trailers (a person's commit) parses with LearnedBy "person".
func Parse(message string) memd.Provenance {
	var p memd.Provenance
	for _, line := range trailerBlock(message) {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if read, ok := readers[strings.ToLower(strings.TrimSpace(k))]; ok {
			read(&p, v)
		}
	}
	if p.LearnedBy == "" {
		p.LearnedBy = memd.LearnedPerson
	}
	return p
}

// trailerBlock returns the lines of the message's last paragraph if every
// line of it is a "Key: value" trailer (or a continuation of one).
func trailerBlock(message string) []string {
	msg := strings.TrimRight(message, "\n ")
	i := strings.LastIndex(msg, "\n\n")
	if i < 0 {
		return nil // a subject alone has no trailers
	}
	var lines []string
	for _, line := range strings.Split(msg[i+2:], "\n") {
		if line != "" && (line[0] == ' ' || line[0] == '\t') && len(lines) > 0 {
			lines[len(lines)-1] += " " + strings.TrimSpace(line)
			continue
		}
		k, _, ok := strings.Cut(line, ": ")
		if !ok || k == "" || strings.ContainsFunc(k, func(r rune) bool { return !(r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)) }) {
			return nil
		}
		lines = append(lines, line)
	}
	return lines
}
