// Package markdown renders the Markdown of notes for people to read:
// CommonMark with GitHub's tables, strikethrough, task lists and autolinks
// (goldmark), sanitised for a browser (bluemonday).
package markdown

import (
	"bytes"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// markdown renders CommonMark with GitHub's tables, strikethrough, task
// lists and autolinks; goldmark leaves raw HTML out, and bluemonday's
// policy for user content strips what could still run script, keeps
// links to http(s) and mailto only, and makes them nofollow.
var (
	markdown = goldmark.New(goldmark.WithExtensions(
		extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
		extension.Strikethrough, extension.Linkify, extension.TaskList))
	sanitize = func() *bluemonday.Policy {
		p := bluemonday.UGCPolicy()
		p.AllowURLSchemes("http", "https", "mailto")
		// A relative link or image would make the reviewer's signed-in
		// browser request a path of memd's own.
		p.AllowRelativeURLs(false)
		p.RequireNoReferrerOnLinks(true)
		p.AddTargetBlankToFullyQualifiedLinks(true)
		p.AllowAttrs("start").OnElements("ol")
		p.AllowAttrs("align").OnElements("th", "td")
		p.AllowAttrs("checked", "disabled", "type").OnElements("input")
		return p
	}()
)

// Render returns a Markdown text as sanitised HTML.
func Render(src []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := markdown.Convert(src, &buf); err != nil {
		return nil, err
	}
	return sanitize.SanitizeBytes(buf.Bytes()), nil
}
