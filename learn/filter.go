// Package learn is memd's learner: after a real chat exchange it asks a
// model (any OpenAI-compatible endpoint) what is worth keeping, and commits
// each resulting change with the messages it came from. Small talk never
// reaches the model; the exchange is shown to it as untrusted evidence; its
// answer may only add facts within limits and remove facts it was shown.
// Work is durable: an exchange is stored before it is acknowledged, the
// model's answer is stored before it is applied, and failures stay visible
// until retried.
package learn

import (
	"strings"
	"unicode"

	"github.com/memd/memd"
)

// smallTalk lists stock phrases that carry nothing to remember.
var smallTalk = map[string]bool{
	"thanks": true, "thank you": true, "thx": true, "ty": true, "ok": true, "okay": true, "k": true,
	"kk": true, "cool": true, "nice": true, "great": true, "lol": true, "haha": true, "hi": true,
	"hello": true, "hey": true, "bye": true, "goodbye": true, "good night": true, "good morning": true,
	"yes": true, "no": true, "yep": true, "nope": true, "sure": true, "got it": true,
	"sounds good": true, "perfect": true, "awesome": true, "np": true, "no problem": true, "cheers": true,
}

// IsSmallTalk reports whether a message is small talk: at most 40
// characters, no question mark, and one of ~32 stock phrases once case,
// punctuation and emoji are set aside ("Thanks!!" is, "thanks, can you…?"
// is not).
func IsSmallTalk(text string) bool {
	t := strings.TrimSpace(text)
	if len([]rune(t)) > 40 || strings.ContainsRune(t, '?') {
		return false
	}
	words := strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	return len(words) > 0 && smallTalk[strings.Join(words, " ")]
}

// Eligible says whether an exchange goes to the model, and if not, why.
// Only direct and group chats teach memory (not routines or API calls),
// and an exchange whose user messages are all small talk is skipped.
func Eligible(ex memd.Exchange) (ok bool, reason string) {
	if ex.ChatKind != memd.ChatDirect && ex.ChatKind != memd.ChatGroup {
		return false, "only direct and group chats teach memory"
	}
	for _, m := range ex.Messages {
		if m.Role == "user" && !IsSmallTalk(m.Text) {
			return true, ""
		}
	}
	return false, "small talk"
}
