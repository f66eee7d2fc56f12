package githttp

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// Pushes. memd speaks git's receive-pack itself rather than letting git
// move main: a push is checked first (the rules of access, every fact line
// it adds well formed), and then integrated like a fetch, as a
// fast-forward or as memd's merge, so a push never loses a fact written
// since the pusher fetched. A refusal is reported per ref in git's own
// report-status, which git shows as "! [remote rejected] main -> main
// (reason)".

// maxPush bounds the body of one push.
const maxPush = 256 << 20

// receiveCaps are the capabilities memd's receive-pack offers: results
// per ref, no thin packs (each pack must stand on its own, so index-pack
// can check it without the shard's objects).
var receiveCaps = "report-status no-thin ofs-delta agent=memd/" + memd.Version

// advertiseReceive answers GET info/refs?service=git-receive-pack.
func advertiseReceive(w http.ResponseWriter, head gitstore.Hash) error {
	var b bytes.Buffer
	pkt(&b, "# service=git-receive-pack\n")
	b.WriteString("0000")
	if head.IsZero() {
		pkt(&b, gitstore.Hash{}.String()+" capabilities^{}\x00"+receiveCaps+"\n")
	} else {
		pkt(&b, head.String()+" refs/heads/main\x00"+receiveCaps+"\n")
	}
	b.WriteString("0000")
	w.Header().Set("Content-Type", "application/x-git-receive-pack-advertisement")
	w.Header().Set("Cache-Control", "no-cache")
	_, err := w.Write(b.Bytes())
	return err
}

// refUpdate is one command of a push.
type refUpdate struct {
	old, new gitstore.Hash
	ref      string
}

// receive answers POST git-receive-pack: the commands, then the pack.
func receive(w http.ResponseWriter, r *http.Request, sh *gitstore.Shard, pusher string) error {
	var body io.Reader = http.MaxBytesReader(w, r.Body, maxPush)
	if r.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(body)
		if err != nil {
			return memd.Errorf(memd.EINVALID, "push body: %v", err)
		}
		defer gz.Close()
		body = gz
	}
	br := bufio.NewReader(body)
	cmds, err := readCommands(br)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/x-git-receive-pack-result")
	w.Header().Set("Cache-Control", "no-cache")
	if len(cmds) == 0 {
		return nil // git's probe before a large push
	}
	var res bytes.Buffer
	results := make([]string, len(cmds))
	needPack := false
	for _, c := range cmds {
		needPack = needPack || !c.new.IsZero()
	}
	var received *gitstore.Received
	if needPack {
		received, err = sh.Receive(br)
		if err != nil {
			pkt(&res, "unpack "+oneLine(memd.ErrorMessage(err))+"\n")
			for _, c := range cmds {
				pkt(&res, "ng "+c.ref+" unpacker error\n")
			}
			res.WriteString("0000")
			_, werr := w.Write(res.Bytes())
			return werr
		}
		defer received.Close()
	}
	accepted := false
	for i, c := range cmds {
		err := apply(sh, c, pusher)
		if err != nil {
			results[i] = "ng " + c.ref + " " + oneLine(memd.ErrorMessage(err))
			continue
		}
		results[i] = "ok " + c.ref
		accepted = true
	}
	if received != nil && !accepted {
		received.Discard()
	}
	pkt(&res, "unpack ok\n")
	for _, line := range results {
		pkt(&res, line+"\n")
	}
	res.WriteString("0000")
	_, err = w.Write(res.Bytes())
	return err
}

// apply checks one ref update and integrates it into main.
func apply(sh *gitstore.Shard, c refUpdate, pusher string) error {
	if c.ref != "refs/heads/main" {
		return memd.Errorf(memd.EINVALID, "memd takes pushes to main only")
	}
	if c.new.IsZero() {
		return memd.Errorf(memd.EINVALID, "memd does not delete main")
	}
	if err := sh.CheckPushed(c.new); err != nil {
		return err
	}
	_, err := sh.Integrate(c.new, gitstore.IntegrateOptions{From: "a push by " + pusher, RefuseConflicts: true})
	return err
}

// readCommands reads a push's ref updates, up to the flush packet.
func readCommands(r *bufio.Reader) ([]refUpdate, error) {
	var cmds []refUpdate
	for {
		line, flush, err := readPkt(r)
		if err != nil {
			return nil, memd.Errorf(memd.EINVALID, "push commands: %v", err)
		}
		if flush {
			return cmds, nil
		}
		line, _, _ = strings.Cut(line, "\x00") // capabilities, on the first
		f := strings.Fields(line)
		if len(f) != 3 || !gitstore.IsHash(f[0]) || !gitstore.IsHash(f[1]) {
			return nil, memd.Errorf(memd.EINVALID, "push command %q: want \"old new ref\"", memd.Shorten(line, 100))
		}
		cmds = append(cmds, refUpdate{old: gitstore.NewHash(f[0]), new: gitstore.NewHash(f[1]), ref: f[2]})
		if len(cmds) > 100 {
			return nil, memd.Errorf(memd.EINVALID, "too many refs in one push")
		}
	}
}

// readPkt reads one pkt-line; flush is true for "0000".
func readPkt(r *bufio.Reader) (line string, flush bool, err error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return "", false, err
	}
	size, err := strconv.ParseUint(string(n[:]), 16, 16)
	if err != nil {
		return "", false, fmt.Errorf("bad pkt-line length %q", n[:])
	}
	if size == 0 {
		return "", true, nil
	}
	if size < 4 {
		return "", false, errors.New("bad pkt-line length")
	}
	buf := make([]byte, size-4)
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", false, err
	}
	return strings.TrimSuffix(string(buf), "\n"), false, nil
}

func pkt(b *bytes.Buffer, s string) { fmt.Fprintf(b, "%04x%s", len(s)+4, s) }

// oneLine fits a message on a report-status line.
func oneLine(s string) string {
	return memd.Shorten(strings.Join(strings.Fields(s), " "), 400)
}
