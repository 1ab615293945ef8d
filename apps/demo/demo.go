package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// Apps returns the eight demo apps, in the order of the case studies.
func Apps() []apps.App {
	return []apps.App{
		NewMetroHail(),
		NewQuickRide(),
		NewMail(),
		NewDrive(),
		NewHealthCompanion(),
		NewTravelMate(),
		NewCreativeMuse(),
		NewSymptomSolver(),
	}
}

// handler runs one function on arguments already checked against its
// params schema; it returns a value that marshals to the function's result.
type handler func(ctx context.Context, c apps.Call) (any, error)

// base is what every demo app shares: an immutable manifest and one handler
// per declared function.
type base struct {
	m        apps.Manifest
	handlers map[string]handler
}

// Manifest returns a copy of the app's manifest.
func (b *base) Manifest() apps.Manifest {
	m := b.m
	m.Functions = make([]apps.Function, len(b.m.Functions))
	for i, f := range b.m.Functions {
		f.Params = slices.Clone(f.Params)
		f.Result = slices.Clone(f.Result)
		m.Functions[i] = f
	}
	m.Provides = maps.Clone(b.m.Provides)
	m.Clearance = slices.Clone(b.m.Clearance)
	m.Labels = slices.Clone(b.m.Labels)
	m.Hosts = slices.Clone(b.m.Hosts)
	return m
}

// Call runs a function: unknown functions and arguments that do not match
// the params schema (unknown fields included) are errors, and a result is
// checked against the result schema before it leaves.
func (b *base) Call(ctx context.Context, c apps.Call) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, ok := b.m.Function(c.Function)
	h := b.handlers[c.Function]
	if !ok || h == nil {
		return nil, fmt.Errorf("%s has no function %q", b.m.Name, c.Function)
	}
	args := bytes.TrimSpace(c.Args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if err := apps.Validate(f.Params, args); err != nil {
		return nil, fmt.Errorf("%s.%s arguments: %w", b.m.Name, f.Name, err)
	}
	c.Args = args
	res, err := h(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", b.m.Name, f.Name, err)
	}
	out, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: encode result: %w", b.m.Name, f.Name, err)
	}
	if err := apps.Validate(f.Result, out); err != nil {
		return nil, fmt.Errorf("%s.%s result: %w", b.m.Name, f.Name, err)
	}
	return out, nil
}

// decode unmarshals schema-checked arguments, refusing unknown fields and
// trailing data.
func decode[T any](args json.RawMessage) (T, error) {
	var v T
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, fmt.Errorf("arguments: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return v, errors.New("arguments: trailing data after the object")
	}
	return v, nil
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// store is typed JSON access to an app's namespace.
type store struct {
	kv       apps.KV
	notFound error
}

func newStore(c apps.Call) (store, error) {
	return openStore(c.Memory, c.NotFound)
}

func openStore(kv apps.KV, notFound error) (store, error) {
	if kv == nil {
		return store{}, errors.New("no memory namespace to keep state in")
	}
	if notFound == nil {
		return store{}, errors.New("no not-found sentinel for the memory namespace")
	}
	return store{kv: kv, notFound: notFound}, nil
}

// get loads key into v; ok is false if the key is missing.
func (s store) get(key string, v any) (ok bool, err error) {
	b, err := s.kv.Get(key)
	if errors.Is(err, s.notFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("decode %q: %w", key, err)
	}
	return true, nil
}

func (s store) put(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %q: %w", key, err)
	}
	return s.kv.Set(key, b)
}

// next increments the counter under key and returns its new value (1 first).
func (s store) next(key string) (int, error) {
	var n int
	if _, err := s.get(key, &n); err != nil {
		return 0, err
	}
	n++
	return n, s.put(key, n)
}

// all loads every value under prefix, in number order (see numbered).
func all[T any](s store, prefix string) ([]T, error) {
	keys, err := s.numbered(prefix)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(keys))
	for _, k := range keys {
		var v T
		ok, err := s.get(k, &v)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// seedWith opens kv and seeds it, once, with recs under prefix+id: what
// every app's first use (its default records) and `bulkhead bench` (a
// task's own) do.
func seedWith[T any](kv apps.KV, notFound error, prefix string, recs []T, id func(T) string) (store, error) {
	s, err := openStore(kv, notFound)
	if err != nil {
		return s, err
	}
	items := map[string]any{}
	for _, r := range recs {
		items[prefix+id(r)] = r
	}
	return s, s.seed(items)
}

// seed writes items once per namespace, the first time the app is used.
func (s store) seed(items map[string]any) error {
	var done bool
	ok, err := s.get("seeded", &done)
	if err != nil || ok {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(items)) {
		if err := s.put(k, items[k]); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	return s.put("seeded", true)
}

// numbered returns the keys under prefix ("sent/" and the like) ordered by
// the number after the prefix; keys whose rest is not a number sort last,
// by name.
func (s store) numbered(prefix string) ([]string, error) {
	keys, err := s.kv.Keys(prefix)
	if err != nil {
		return nil, err
	}
	num := func(k string) (int, bool) {
		n, err := strconv.Atoi(strings.TrimLeft(strings.TrimPrefix(k, prefix), "abcdefghijklmnopqrstuvwxyz"))
		return n, err == nil
	}
	slices.SortFunc(keys, func(a, b string) int {
		na, oka := num(a)
		nb, okb := num(b)
		switch {
		case oka && okb && na != nb:
			return na - nb
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys, nil
}

// matches reports whether every word of query occurs in one of fields,
// ignoring case; an empty query matches everything.
func matches(query string, fields ...string) bool {
	hay := strings.ToLower(strings.Join(fields, "\n"))
	for _, w := range strings.Fields(strings.ToLower(query)) {
		w = strings.Trim(w, "\"'`.,;:!?()[]{}")
		if w != "" && !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

// hash is FNV-1a over s.
func hash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}
