// Command tinymodel creates the tiny random-weight test model on a running
// Ollama server, for trying bulkhead by hand without downloading a model:
//
//	OLLAMA_HOST=127.0.0.1:11434 go run ./internal/ollamatest/tinymodel -name tiny
//
// Its words are noise; it proves the wire path. With -tools its template
// lists the tools it is given, so Ollama reports it can call tools and
// bulkhead accepts it as a spoke's model (the calls it makes are noise
// too).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

func main() {
	name := flag.String("name", "tiny", "model name to create")
	predict := flag.Int("num-predict", 64, "default answer length in tokens")
	tools := flag.Bool("tools", false, "a template that takes tools, so Ollama reports the tools capability")
	flag.Parse()
	if err := create(*name, *predict, *tools); err != nil {
		fmt.Fprintln(os.Stderr, "tinymodel:", err)
		os.Exit(1)
	}
	fmt.Println("created", *name)
}

func create(name string, predict int, tools bool) error {
	c, err := api.ClientFromEnvironment()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "tinymodel")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	params := map[string]any{}
	for k, v := range ollamatest.TinyParameters {
		params[k] = v
	}
	params["num_predict"] = predict
	// Random weights at temperature 0 repeat one token until Ollama aborts
	// the stream; sampling with a repeat penalty keeps it going.
	params["temperature"] = 1.0
	params["repeat_penalty"] = 1.8
	params["repeat_last_n"] = 64
	ctx := context.Background()
	if err := ollamatest.CreateTiny(ctx, c, name, filepath.Join(dir, "tiny.gguf"), params); err != nil || !tools {
		return err
	}
	return c.Create(ctx, &api.CreateRequest{Model: name, From: name, Template: ollamatest.TinyToolsTemplate, Parameters: params}, func(api.ProgressResponse) error { return nil })
}
