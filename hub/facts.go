package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bulkhead-dev/bulkhead/guard"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// maxPlannerFacts bounds the entity names the planner sees.
const maxPlannerFacts = 50

// mask masks the instruction-like text in text, which owner is about to
// store (what says which of its texts it is), and writes each masking to
// the action log of the turn's broker (the hub's, with no turn).
func (o *Operator) mask(ctx context.Context, tr *turnRun, owner, what, text string) string {
	masked, _ := o.maskWith(ctx, tr, owner, what, text)
	return masked
}

// maskWith is mask, also returning the spans it masked.
func (o *Operator) maskWith(ctx context.Context, tr *turnRun, owner, what, text string) (string, []guard.Finding) {
	if text == "" {
		return text, nil
	}
	fs, err := o.detector.Detect(ctx, text)
	if err != nil {
		o.log.Warn("instruction detector failed; masking with what it found", "owner", owner, "err", err)
	}
	masked, spans := guard.Apply(text, fs)
	if len(spans) == 0 {
		return text, nil
	}
	var parts []string
	for _, s := range spans {
		parts = append(parts, fmt.Sprintf("%s: %q", s.Kind, clip(s.Text, 160)))
	}
	o.note(tr, "masked", owner, fmt.Sprintf("masked %d span(s) of instruction-like text in %s before storing it — %s", len(spans), what, strings.Join(parts, "; ")))
	return masked, spans
}

// spokeMask is the masker of a spoke serving app in chat: it notes to the
// broker of whatever turn runs in the chat.
func (o *Operator) spokeMask(chat, app string) func(ctx context.Context, text string) string {
	return func(ctx context.Context, text string) string {
		return o.mask(ctx, o.turn(chat), SpokeOwner(app), "its answer", text)
	}
}

// plannerMemory is the planner's view of long-term memory: the hub's
// summary of the chat (built from the user's messages only) and the
// names — never the values — of the entities the hub holds.
func (o *Operator) plannerMemory(chat string) (string, []string, error) {
	if o.mem == nil {
		return "", nil, nil
	}
	ns, err := o.store.Namespace(hubOwner)
	if err != nil {
		return "", nil, err
	}
	lt := ns.LongTerm()
	sum, err := lt.Summary(chat)
	if err != nil && !errors.Is(err, memory.ErrNotFound) {
		return "", nil, fmt.Errorf("planner memory: %w", err)
	}
	es, err := lt.Entities()
	if err != nil {
		return "", nil, fmt.Errorf("planner memory: %w", err)
	}
	slices.SortStableFunc(es, func(a, b memory.Entity) int { return b.Time.Compare(a.Time) })
	var names []string
	for _, e := range es {
		if validEntityName(e.Key) && len(names) < maxPlannerFacts {
			names = append(names, e.Key)
		}
	}
	slices.Sort(names)
	return sum.Text, names, nil
}

// recordResult turns a step's typed result into hub entities: each
// top-level property the catalog's response schema declares, with a
// scalar value, becomes "<domain>.<property>" (travel.plan_trip's booking
// is travel.booking; "<domain>.<app>.<property>" when several installed
// apps provide the functionality), its value masked, its labels those of
// the result.
// Names come from the catalog, never from the app.
func (o *Operator) recordResult(ctx context.Context, tr *turnRun, app, fn string, value json.RawMessage) {
	if o.mem == nil || tr.private || o.opts.Apps == nil || value == nil {
		return
	}
	entry, ok := o.opts.Apps.Catalog().Get(fn)
	if !ok {
		return
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	var got map[string]any
	if json.Unmarshal(entry.Response, &schema) != nil || json.Unmarshal(value, &got) != nil {
		return
	}
	domain, _, _ := strings.Cut(fn, ".")
	if len(o.opts.Apps.Providers(fn)) > 1 {
		// Several apps answer this functionality (two ride services):
		// keep each one's values apart, ride.metro_hail.fare_usd.
		domain += "." + app
	}
	var facts []memory.Entity
	for prop := range schema.Properties {
		name := domain + "." + prop
		v, ok := got[prop]
		if !ok || !validEntityName(name) {
			continue
		}
		var text string
		switch t := v.(type) {
		case string:
			text = t
		case float64, bool:
			text = fmt.Sprint(t)
		default:
			continue
		}
		if text = strings.TrimSpace(text); text == "" {
			continue
		}
		text = o.mask(ctx, tr, hubOwner, "the value of "+name, clip(text, maxEntityValue))
		labels := o.labelsOf(app, fn)
		slices.Sort(labels)
		facts = append(facts, memory.Entity{Key: name, Value: text, Source: app + " (" + fn + ")", Chat: tr.chat, Labels: slices.Compact(labels)})
	}
	ns, err := o.store.Namespace(hubOwner)
	if err == nil {
		// A fact the user stated is theirs: an app's value for the same
		// name is kept beside it, under the app's name, never over it.
		lt := ns.LongTerm()
		for i, f := range facts {
			if e, err := lt.Entity(f.Key); err == nil && e.Source == "user" {
				if alt := f.Key + "." + app; validEntityName(alt) {
					facts[i].Key = alt
				} else {
					facts[i].Key = ""
				}
			}
		}
		facts = slices.DeleteFunc(facts, func(f memory.Entity) bool { return f.Key == "" })
		err = lt.PutEntities(facts...)
	}
	if err != nil {
		o.log.Warn("record typed result", "app", app, "functionality", fn, "err", err)
	}
}

// gatherFacts adds to sh the hub-held values step s needs and returns
// their names: what a data permission will show, value by value, before
// anything is passed.
func (o *Operator) gatherFacts(tr *turnRun, s Step, sh *share) []string {
	if len(s.Needs) == 0 || o.mem == nil || tr.private {
		return nil
	}
	ns, err := o.store.Namespace(hubOwner)
	if err != nil {
		return nil
	}
	var names []string
	for _, name := range s.Needs {
		e, err := ns.LongTerm().Entity(name)
		if err != nil {
			continue
		}
		sh.add(name, quote(e.Value))
		sh.entities[name] = e.Value
		if strings.Contains(e.Value, guard.MarkerPrefix) {
			sh.masked = append(sh.masked, name)
		}
		names = append(names, name)
		sh.labels = append(sh.labels, e.Labels...)
		src := o.entitySource(e.Source)
		sh.prov = append(sh.prov, permissions.Provenance{Path: name, Source: src})
		if src != permissions.ProvenanceUser {
			sh.sources[src] = mergeData(sh.sources[src], quote(map[string]string{name: e.Value}))
		}
	}
	return names
}

// entitySource is the provenance of a hub entity: the user's own words,
// or the app and function whose result it was (stored as
// "metro_hail (ride.estimate_fare)", named "metro_hail.estimate_fare").
func (o *Operator) entitySource(src string) string {
	if src == "user" {
		return permissions.ProvenanceUser
	}
	app, fn, ok := strings.Cut(src, " (")
	if !ok {
		return src
	}
	return app + "." + o.mappedFunction(app, strings.TrimSuffix(fn, ")"))
}

// mergeData joins two JSON objects of shared data (either may be nil).
func mergeData(a, b json.RawMessage) json.RawMessage {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	m := map[string]json.RawMessage{}
	if json.Unmarshal(a, &m) != nil {
		return a
	}
	var extra map[string]json.RawMessage
	if json.Unmarshal(b, &extra) != nil {
		return a
	}
	for k, v := range extra {
		m[k] = v
	}
	return quote(m)
}
