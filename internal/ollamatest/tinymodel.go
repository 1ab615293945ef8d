package ollamatest

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/ollama/ollama/fs/ggml"
)

// Shape of the tiny model written by WriteTinyGGUF. It is a regular llama
// architecture model, just very small (≈0.5 MB of F32 weights), so that a
// real ollama engine loads it and generates (meaningless) text in
// milliseconds on a CPU.
const (
	TinyEmbedding   = 64
	TinyBlocks      = 2
	TinyHeads       = 4
	TinyHeadsKV     = 4
	TinyFeedForward = 128
	TinyContext     = 8192

	// TinyBOS and TinyEOS are the ids of the two control tokens that follow
	// the 256 byte tokens.
	TinyBOS   = 256
	TinyEOS   = 257
	TinyVocab = 258

	tinySeed = 0x5eed_b01d
)

// GGUF token types, as in llama.cpp (LLAMA_TOKEN_TYPE_*).
const (
	tokenTypeNormal  int32 = 1
	tokenTypeControl int32 = 3
)

// gpt2ByteToUnicode returns GPT-2's reversible byte-to-unicode mapping
// (bytes_to_unicode in openai/gpt-2 encoder.py): printable latin-1 bytes map
// to themselves, the others to code points from U+0100 upward, in order.
func gpt2ByteToUnicode() [256]rune {
	var m [256]rune
	n := 0
	for b := range 256 {
		if ('!' <= b && b <= '~') || ('¡' <= b && b <= '¬') || ('®' <= b && b <= 'ÿ') {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}

// TinyVocabulary returns the tokens of the tiny model: token i (i < 256) is
// byte i in GPT-2's byte-to-unicode encoding, followed by the BOS and EOS
// control tokens.
func TinyVocabulary() []string {
	m := gpt2ByteToUnicode()
	tokens := make([]string, 0, TinyVocab)
	for _, r := range m {
		tokens = append(tokens, string(r))
	}
	return append(tokens, "<|begin_of_text|>", "<|end_of_text|>")
}

// tinyKV returns the GGUF metadata of the tiny model. Keys without a
// "general." or "tokenizer." prefix are prefixed with "llama." by WriteGGUF;
// they are spelled out here for clarity.
func tinyKV() ggml.KV {
	tokens := TinyVocabulary()
	types := make([]int32, len(tokens))
	scores := make([]float32, len(tokens))
	for i := range types {
		types[i] = tokenTypeNormal
	}
	types[TinyBOS] = tokenTypeControl
	types[TinyEOS] = tokenTypeControl

	return ggml.KV{
		"general.architecture":         "llama",
		"general.name":                 "bulkhead-tiny",
		"general.file_type":            uint32(0), // all F32
		"general.quantization_version": uint32(2),
		"general.alignment":            uint32(32),

		"llama.vocab_size":                       uint32(TinyVocab),
		"llama.context_length":                   uint32(TinyContext),
		"llama.embedding_length":                 uint32(TinyEmbedding),
		"llama.block_count":                      uint32(TinyBlocks),
		"llama.feed_forward_length":              uint32(TinyFeedForward),
		"llama.attention.head_count":             uint32(TinyHeads),
		"llama.attention.head_count_kv":          uint32(TinyHeadsKV),
		"llama.rope.dimension_count":             uint32(TinyEmbedding / TinyHeads),
		"llama.rope.freq_base":                   float32(10000),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),

		"tokenizer.ggml.model":      "gpt2",
		"tokenizer.ggml.pre":        "default",
		"tokenizer.ggml.tokens":     tokens,
		"tokenizer.ggml.token_type": types,
		"tokenizer.ggml.scores":     scores,
		// Byte-level only: every byte is its own token and nothing merges.
		"tokenizer.ggml.merges":           []string{},
		"tokenizer.ggml.bos_token_id":     uint32(TinyBOS),
		"tokenizer.ggml.eos_token_id":     uint32(TinyEOS),
		"tokenizer.ggml.add_bos_token":    true,
		"tokenizer.ggml.add_eos_token":    false,
		"tokenizer.ggml.padding_token_id": uint32(TinyEOS),
	}
}

// f32Tensor is the data of one F32 tensor; it implements io.WriterTo as
// ggml.WriteGGUF requires.
type f32Tensor []float32

func (t f32Tensor) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf [4]byte
	var n int64
	for _, v := range t {
		binary.LittleEndian.PutUint32(buf[:], math.Float32bits(v))
		m, err := bw.Write(buf[:])
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

// tinyTensors returns the weights of the tiny model. Shapes are in GGML order
// (ne[0], the input dimension of a matrix, first). Values are drawn from a
// fixed seed, so the file is byte-for-byte reproducible.
func tinyTensors() []*ggml.Tensor {
	rng := rand.New(rand.NewPCG(tinySeed, tinySeed>>1))

	var ts []*ggml.Tensor
	add := func(name string, data f32Tensor, shape ...uint64) {
		ts = append(ts, &ggml.Tensor{
			Name:     name,
			Kind:     uint32(ggml.TensorTypeF32),
			Shape:    shape,
			WriterTo: data,
		})
	}
	// random returns n values uniform in ±sqrt(3/fanIn) (unit variance
	// outputs for unit variance inputs), so activations neither vanish nor
	// explode through the layers.
	random := func(n int, fanIn int) f32Tensor {
		limit := math.Sqrt(3 / float64(fanIn))
		d := make(f32Tensor, n)
		for i := range d {
			d[i] = float32((rng.Float64()*2 - 1) * limit)
		}
		return d
	}
	ones := func(n int) f32Tensor {
		d := make(f32Tensor, n)
		for i := range d {
			d[i] = 1
		}
		return d
	}

	const e, ff, kv = TinyEmbedding, TinyFeedForward, TinyEmbedding / TinyHeads * TinyHeadsKV

	add("token_embd.weight", random(e*TinyVocab, 1), e, TinyVocab)
	for i := range TinyBlocks {
		blk := func(s string) string { return fmt.Sprintf("blk.%d.%s.weight", i, s) }
		add(blk("attn_norm"), ones(e), e)
		add(blk("attn_q"), random(e*e, e), e, e)
		add(blk("attn_k"), random(e*kv, e), e, kv)
		add(blk("attn_v"), random(e*kv, e), e, kv)
		add(blk("attn_output"), random(e*e, e), e, e)
		add(blk("ffn_norm"), ones(e), e)
		add(blk("ffn_gate"), random(e*ff, e), e, ff)
		add(blk("ffn_up"), random(e*ff, e), e, ff)
		add(blk("ffn_down"), random(ff*e, ff), ff, e)
	}
	add("output_norm.weight", ones(e), e)

	out := random(e*TinyVocab, 1)
	// Zero the output rows of the control tokens: their logit is then always
	// 0 while the max over 256 random byte logits is positive (but for a
	// 2^-256 chance), so greedy decoding never picks BOS/EOS on its own and
	// generation runs until num_predict — or until a grammar (format) leaves
	// EOS as the only choice.
	clear(out[TinyBOS*e : (TinyEOS+1)*e])
	add("output.weight", out, e, TinyVocab)
	return ts
}

// WriteTinyGGUF writes a tiny llama model with deterministic random weights
// and a byte-level GPT-2 tokenizer to path, in GGUF format.
func WriteTinyGGUF(path string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if err := ggml.WriteGGUF(f, tinyKV(), tinyTensors()); err != nil {
		return fmt.Errorf("write tiny gguf: %w", err)
	}
	return nil
}
