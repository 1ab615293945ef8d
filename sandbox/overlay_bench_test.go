//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// stagedOps are what a command does in a folder it shares with the user,
// each timed inside the command (its start not counted): extracting a
// tarball of 2,000 small files, grep -r over 2,000 files, stat of each,
// reading a 64 MB file, writing one; and the reads again in the same
// mount (timed from the script's own s= where it sets one).
var stagedOps = []struct{ name, script string }{
	{"tar-x", "mkdir x$$ && tar xf src.tar -C x$$"},
	{"grep-r", "grep -r needle tree > /dev/null"},
	{"stat", "find tree -type f -exec stat -c %s {} + > /dev/null"},
	{"read-64MB", "cat big.bin > /dev/null"},
	{"write-64MB", "dd if=/dev/zero of=out$$.bin bs=1M count=64 status=none"},
	// the same reads a second time in the same mount: what a command
	// that reads the folder more than once, or a server that runs on,
	// pays once the overlay's own entries are in the kernel's caches
	{"grep-r-again", "grep -r needle tree > /dev/null; s=$(date +%s%N); grep -r needle tree > /dev/null"},
	{"stat-again", "find tree -type f -exec stat -c %s {} + > /dev/null; s=$(date +%s%N); find tree -type f -exec stat -c %s {} + > /dev/null"},
	{"read-64MB-again", "cat big.bin > /dev/null; s=$(date +%s%N); cat big.bin > /dev/null"},
}

// BenchmarkStagedFolder times each of stagedOps in a folder the command
// writes through its layer (the kernel overlay every shared folder is)
// against the same folder written directly (staging left out), in the
// same sandbox otherwise, run in turn within each iteration; it reports
// the ratio of the sums per operation (x-<op>: staged / plain):
//
//	go test -run XXX -bench StagedFolder -benchtime 5x -count 6 ./sandbox | benchstat -
func BenchmarkStagedFolder(b *testing.B) {
	if _, err := sandbox.Status(); err != nil {
		b.Skip("no Landlock here")
	}
	dir := b.TempDir()
	tree := filepath.Join(dir, "tree")
	for i := range 2000 {
		p := filepath.Join(tree, fmt.Sprint(i%40), fmt.Sprintf("f%d.txt", i))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, bytes.Repeat([]byte(fmt.Sprintf("line %d of some text\n", i)), 50), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if out, err := exec.Command("tar", "cf", filepath.Join(dir, "src.tar"), "-C", dir, "tree").CombinedOutput(); err != nil {
		b.Fatalf("tar: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), bytes.Repeat([]byte{7}, 64<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	layers := b.TempDir()
	run := func(staged bool, script string) int64 {
		pol := sandbox.Policy{ReadWrite: []string{dir}, Deny: []string{layers}}
		if staged {
			up, work, err := freshLayer(layers)
			if err != nil {
				b.Fatal(err)
			}
			pol.Layers = map[string]sandbox.Overlay{dir: {Upper: up, Work: work}}
		} else {
			pol.Without = []sandbox.Mechanism{sandbox.Staging}
		}
		line := "s=$(date +%s%N); " + script + "; e=$(date +%s%N); echo $((e-s))"
		cmd, cleanup, err := sandbox.Command(context.Background(), pol, dir, "/bin/sh", "-c", line)
		if err != nil {
			b.Fatal(err)
		}
		defer cleanup()
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%s: %v %s", script, err, out)
		}
		fields := strings.Fields(string(out))
		ns, err := strconv.ParseInt(fields[len(fields)-1], 10, 64)
		if err != nil {
			b.Fatalf("%s said %q", script, out)
		}
		return ns
	}
	sums := map[string][2]int64{}
	for b.Loop() {
		for _, op := range stagedOps {
			s := sums[op.name]
			s[0] += run(false, op.script)
			s[1] += run(true, op.script)
			sums[op.name] = s
		}
		// the plain runs' writes go
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if n := e.Name(); strings.HasPrefix(n, "x") || strings.HasPrefix(n, "out") {
				os.RemoveAll(filepath.Join(dir, n))
			}
		}
	}
	for _, op := range stagedOps {
		s := sums[op.name]
		b.ReportMetric(float64(s[1])/float64(s[0]), "x-"+op.name)
		b.ReportMetric(float64(s[0])/1e6/float64(b.N), "plain-ms-"+op.name)
	}
}

var layerN int

// freshLayer makes an empty upper and work folder under root.
func freshLayer(root string) (string, string, error) {
	layerN++
	up, work := filepath.Join(root, fmt.Sprint(layerN), "upper"), filepath.Join(root, fmt.Sprint(layerN), "work")
	for _, d := range []string{up, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", "", err
		}
	}
	return up, work, nil
}
