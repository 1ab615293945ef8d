package apps

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	schemaMu    sync.Mutex
	schemaCache = map[[32]byte]*jsonschema.Schema{}
)

// Compile compiles a JSON schema (cached by content).
func Compile(schema json.RawMessage) (*jsonschema.Schema, error) {
	if len(schema) == 0 {
		return nil, fmt.Errorf("empty schema")
	}
	key := sha256.Sum256(schema)
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s, ok := schemaCache[key]; ok {
		return s, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	// Schemas are app-authored: a $ref must never make the hub read a file
	// or fetch a URL.
	c.UseLoader(noLoader{})
	url := fmt.Sprintf("mem://schema/%x.json", key[:8])
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, err
	}
	schemaCache[key] = s
	return s, nil
}

// Validate checks a JSON value against a schema. The error names the first
// violations, never echoes the value.
func Validate(schema, value json.RawMessage) error {
	s, err := Compile(schema)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("does not match the schema: %v", err)
	}
	return nil
}

// DecodeArgs checks a call's arguments against f's parameter schema, then
// decodes them strictly (unknown fields refused) into v. Empty or null
// arguments are read as {}.
func DecodeArgs(f Function, args json.RawMessage, v any) error {
	if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
		args = json.RawMessage(`{}`)
	}
	if err := Validate(f.Params, args); err != nil {
		return fmt.Errorf("%s: arguments %v", f.Name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: arguments: %v", f.Name, err)
	}
	return nil
}

// noLoader refuses every external reference.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema references are not allowed (%s)", url)
}
