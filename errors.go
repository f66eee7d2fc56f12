package memd

import (
	"errors"
	"fmt"
	"syscall"
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

// ErrorCode returns the code of the first *Error in err's chain; for any
// other error EUNAVAILABLE if the disk is full (DiskFull), else EINTERNAL;
// and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if DiskFull(err) {
		return EUNAVAILABLE
	}
	return EINTERNAL
}

// ErrorMessage returns the message a caller should see: the *Error's message
// for memd errors, what to do for a full disk, and a generic text for
// internal ones, whose details belong in the log rather than in a response.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	if DiskFull(err) {
		return diskFullMessage
	}
	return "internal error"
}

// diskFullMessage is what a caller is told when a write failed for want of
// room. It does not say what was kept: a single write moves no branch, but
// one of several steps may fail after others went through.
const diskFullMessage = "the disk holding memd's data is full (no space left on device, or a quota reached): " +
	"free room, then try again"

// DiskFull reports whether err is a write that failed for want of room on
// the disk or under a quota: the caller can act on it (free room, retry),
// unlike an internal error, and the operator needs its details in the log.
func DiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// ErrorRule returns the access rule named by err, if any.
func ErrorRule(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Rule
	}
	return ""
}
