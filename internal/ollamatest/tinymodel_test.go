package ollamatest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/ollama/ollama/fs/ggml"
)

func TestGPT2ByteToUnicode(t *testing.T) {
	m := gpt2ByteToUnicode()
	seen := map[rune]bool{}
	for b, r := range m {
		if seen[r] {
			t.Fatalf("byte %d: rune %q mapped twice", b, r)
		}
		seen[r] = true
	}
	// Well-known fixed points of the GPT-2 mapping.
	for b, want := range map[int]rune{' ': 'Ġ', '\n': 'Ċ', '\t': 'ĉ', 'a': 'a', '!': '!', 0: 'Ā', 0xAD: 'Ń', 0x7F: 'ġ'} {
		if m[b] != want {
			t.Errorf("byte %#x: got %q, want %q", b, m[b], want)
		}
	}
	for i, tok := range TinyVocabulary()[:256] {
		if utf8.RuneCountInString(tok) != 1 {
			t.Errorf("token %d = %q: want one rune", i, tok)
		}
	}
}

func TestWriteTinyGGUF(t *testing.T) {
	dir := t.TempDir()
	p1, p2 := filepath.Join(dir, "a.gguf"), filepath.Join(dir, "b.gguf")
	if err := WriteTinyGGUF(p1); err != nil {
		t.Fatal(err)
	}
	if err := WriteTinyGGUF(p2); err != nil {
		t.Fatal(err)
	}
	b1, err := os.ReadFile(p1)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := os.ReadFile(p2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1, b2) {
		t.Fatal("WriteTinyGGUF is not deterministic")
	}
	if len(b1) > 1<<20 {
		t.Errorf("tiny model is %d bytes, want < 1 MiB", len(b1))
	}
	t.Logf("tiny model: %d bytes", len(b1))

	f, err := os.Open(p1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := ggml.Decode(f, -1)
	if err != nil {
		t.Fatalf("ollama cannot decode the tiny model: %v", err)
	}
	kv := g.KV()
	if got := kv.Architecture(); got != "llama" {
		t.Errorf("architecture %q", got)
	}
	for key, want := range map[string]uint32{
		"block_count":                 TinyBlocks,
		"embedding_length":            TinyEmbedding,
		"feed_forward_length":         TinyFeedForward,
		"attention.head_count":        TinyHeads,
		"attention.head_count_kv":     TinyHeadsKV,
		"context_length":              TinyContext,
		"tokenizer.ggml.bos_token_id": TinyBOS,
		"tokenizer.ggml.eos_token_id": TinyEOS,
	} {
		if got := kv.Uint(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}
	if got := kv.String("tokenizer.ggml.model"); got != "gpt2" {
		t.Errorf("tokenizer.ggml.model = %q", got)
	}
	if got := len(kv.Strings("tokenizer.ggml.tokens")); got != TinyVocab {
		t.Errorf("%d tokens, want %d", got, TinyVocab)
	}
	if got := kv.Float("attention.layer_norm_rms_epsilon"); got <= 0 {
		t.Errorf("rms epsilon %v", got)
	}

	tensors := g.Tensors().Items()
	if want := 3 + 9*TinyBlocks; len(tensors) != want {
		t.Errorf("%d tensors, want %d", len(tensors), want)
	}
	byName := map[string]*ggml.Tensor{}
	for _, tt := range tensors {
		byName[tt.Name] = tt
	}
	for name, shape := range map[string][]uint64{
		"token_embd.weight":     {TinyEmbedding, TinyVocab},
		"output.weight":         {TinyEmbedding, TinyVocab},
		"output_norm.weight":    {TinyEmbedding},
		"blk.1.ffn_down.weight": {TinyFeedForward, TinyEmbedding},
		"blk.0.attn_q.weight":   {TinyEmbedding, TinyEmbedding},
	} {
		tt := byName[name]
		if tt == nil {
			t.Errorf("missing tensor %s", name)
			continue
		}
		if !equalShape(tt.Shape, shape) {
			t.Errorf("%s: shape %v, want %v", name, tt.Shape, shape)
		}
	}
}

func equalShape(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
