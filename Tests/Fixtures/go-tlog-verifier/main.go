// An independent verifier of photosd's transparency-log proofs, written against the Go checksum
// database's own packages (golang.org/x/mod/sumdb/note and sumdb/tlog), built in GOPATH mode from
// Debian's golang-golang-x-mod-dev with no network. It reads one JSON request on stdin and prints
// "ok", or the first failure, exiting 1.
//
// Request: {"key": VERIFIER_KEY, "note": SIGNED_NOTE, "leaf": BASE64_LEAF_DATA, "index": N,
//           "inclusion": [BASE64_HASH…], "oldNote": SIGNED_NOTE, "consistency": [BASE64_HASH…]}
// The note's text is a C2SP tlog-checkpoint: origin, size, base64 root hash. "leaf" and
// "inclusion" check a leaf against the note's tree; "oldNote" and "consistency" check that the
// note's tree extends the old one. Either part may be left out.
package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type request struct {
	Key         string   `json:"key"`
	Note        string   `json:"note"`
	Leaf        string   `json:"leaf"`
	Index       int64    `json:"index"`
	Inclusion   []string `json:"inclusion"`
	OldNote     string   `json:"oldNote"`
	Consistency []string `json:"consistency"`
}

// checkpoint opens a signed note with the key and reads its tree.
func checkpoint(verifiers note.Verifiers, text string) (int64, tlog.Hash, error) {
	n, err := note.Open([]byte(text), verifiers)
	if err != nil {
		return 0, tlog.Hash{}, fmt.Errorf("note: %v", err)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 4 {
		return 0, tlog.Hash{}, errors.New("checkpoint: fewer than three lines")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 {
		return 0, tlog.Hash{}, errors.New("checkpoint: bad size")
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		return 0, tlog.Hash{}, fmt.Errorf("checkpoint: %v", err)
	}
	return size, root, nil
}

func hashes(list []string) ([]tlog.Hash, error) {
	var out []tlog.Hash
	for _, text := range list {
		h, err := tlog.ParseHash(text)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

func run() error {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		return fmt.Errorf("request: %v", err)
	}
	verifier, err := note.NewVerifier(req.Key)
	if err != nil {
		return fmt.Errorf("key: %v", err)
	}
	verifiers := note.VerifierList(verifier)
	size, root, err := checkpoint(verifiers, req.Note)
	if err != nil {
		return err
	}
	if req.Leaf != "" {
		data, err := base64.StdEncoding.DecodeString(req.Leaf)
		if err != nil {
			return fmt.Errorf("leaf: %v", err)
		}
		proof, err := hashes(req.Inclusion)
		if err != nil {
			return fmt.Errorf("inclusion: %v", err)
		}
		if err := tlog.CheckRecord(tlog.RecordProof(proof), size, root, req.Index, tlog.RecordHash(data)); err != nil {
			return fmt.Errorf("inclusion: %v", err)
		}
	}
	if req.OldNote != "" {
		oldSize, oldRoot, err := checkpoint(verifiers, req.OldNote)
		if err != nil {
			return fmt.Errorf("old %v", err)
		}
		proof, err := hashes(req.Consistency)
		if err != nil {
			return fmt.Errorf("consistency: %v", err)
		}
		if err := tlog.CheckTree(tlog.TreeProof(proof), size, root, oldSize, oldRoot); err != nil {
			return fmt.Errorf("consistency: %v", err)
		}
	}
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("ok")
}
