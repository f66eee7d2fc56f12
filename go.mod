module github.com/memd/memd

go 1.26.8

require (
	github.com/go-git/go-git/v5 v5.19.3
	golang.org/x/text v0.44.0
)

require (
	github.com/pjbgf/sha1cd v0.7.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
