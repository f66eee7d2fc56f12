package memd

import (
	"errors"
	"fmt"
)

// Error codes. Every surface (HTTP, MCP, CLI) maps these in one table each.
const (
	EINVALID         = "invalid"          // bad input: names, dates, text, JSON
	EUNAUTHORIZED    = "unauthorized"     // missing or unknown token
	EFORBIDDEN       = "forbidden"        // a rule of access refused the call
	ENOTFOUND        = "not_found"        // no such shard, fact, commit, agent or note
	ECONFLICT        = "conflict"         // the state changed under the caller, or it already exists
	ETOOLARGE        = "too_large"        // a body, frame or value over its limit
	EANCHORNOTFOUND  = "anchor_not_found" // an anchored edit's anchor is absent
	EANCHORAMBIGUOUS = "anchor_ambiguous" // an anchored edit's anchor occurs more than once
	EREVISION        = "revision_mismatch"
	EUNAVAILABLE     = "unavailable" // the service cannot do this now (shutting down, learning off)
	EINTERNAL        = "internal"
)

// Error is an error a user can act on: a code from the list above, a message
// that says what was wrong, and for refusals the rule that refused.
type Error struct {
	Code    string
	Message string
	Rule    string // for EFORBIDDEN: the name of the access rule that refused
	Err     error  // optional cause, not shown to callers
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Forbidden returns an EFORBIDDEN error naming the rule that refused.
func Forbidden(rule, format string, args ...any) *Error {
	return &Error{Code: EFORBIDDEN, Rule: rule, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message a caller should see: the *Error's message
// for memd errors, and a generic text for internal ones, whose details
// belong in the log rather than in a response.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// ErrorRule returns the access rule named by err, if any.
func ErrorRule(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Rule
	}
	return ""
}
