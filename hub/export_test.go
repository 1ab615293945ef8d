package hub

import (
	"context"
	"encoding/json"
	"time"
)

// Schemas of the memory calls, for the test against a real Ollama.
var (
	SummarySchemaForTest  = summarySchema(defaultSummaryChars)
	ExtractSchemaForTest  = extractSchema
	DetectorSchemaForTest = detectorSchema
)

// PlanSchemaWithFactsForTest is the planner's schema when the hub holds facts.
func PlanSchemaWithFactsForTest(fns []Functionality, facts []string) json.RawMessage {
	return planSchema(fns, nil, facts)
}

// SideBySideForTest reads and sets what the operator learned of the model
// server: that it runs the planner and a draft at once.
func SideBySideForTest(o *Operator) bool {
	return o.order.SideBySide(hostIn(context.Background(), o.opts.HubModel))
}
func SetSideBySideForTest(o *Operator, v bool) {
	o.order.update(hostIn(context.Background(), o.opts.HubModel), func(f *serverFacts) { f.SideBySide = v })
}

// PlannerReadForTest notes that o's hub model server has read a
// planner's prompt (a warm server: no cold triage, triage.go).
func PlannerReadForTest(o *Operator) {
	o.plannerWasRead(hostIn(context.Background(), o.opts.HubModel))
}

// KindPendingForTest is kindPending.
func KindPendingForTest(text string) bool { return kindPending(text) }

// SerialForTest reports whether o's hub model server is known to run one
// request at a time.
func SerialForTest(o *Operator) bool {
	return o.order.get(hostIn(context.Background(), o.opts.HubModel)).Serial
}

// SpokeStartsForTest reports whether a spoke for app in chat can be had
// now (Operator.spoke); one started here is stopped at once.
func SpokeStartsForTest(o *Operator, chat, app string) bool {
	sp, err := o.spoke(o.store, chat, app)
	if err != nil {
		return false
	}
	sp.Stop()
	return true
}

// RequestLabelForTest is the words before each request in the planner's
// prompt.
const RequestLabelForTest = requestLabel

// AppsRunForTest reports whether the last plan on the hub's server
// needed apps (serverFacts.AppsRun).
func AppsRunForTest(o *Operator) bool {
	return o.order.get(hostIn(context.Background(), o.opts.HubModel)).AppsRun
}

// EndAppsRunForTest forgets that the last plans needed apps: the next
// turn's draft goes ahead where the order says so.
func EndAppsRunForTest(o *Operator) {
	o.order.update(hostIn(context.Background(), o.opts.HubModel), func(f *serverFacts) { f.AppsRun = false })
}

// NoTriageForTest turns the triage off: the planner-first path alone.
func NoTriageForTest(o *Operator) { o.noTriage = true }

// SetDraftLeadForTest sets how long a planner waits for a draft that went
// ahead (draftLead).
func SetDraftLeadForTest(o *Operator, d time.Duration) { o.draftLead = d }

// SetProbeWindowForTest sets how long a chat plan's planner is held for
// the draft's first piece while the order is not known (probeWindow).
func SetProbeWindowForTest(o *Operator, d time.Duration) { o.probeWindow = d }

// SetSerialForTest makes o's hub model server known to run one request
// at a time.
func SetSerialForTest(o *Operator) {
	o.order.update(hostIn(context.Background(), o.opts.HubModel), func(f *serverFacts) { f.Serial, f.SideBySide = true, false })
}

// SeatedForTest reports whether the operator takes its planner's server
// to hold a slot for the other calls (seat.go).
func SeatedForTest(o *Operator) bool {
	return o.order.seats.get(seatKey(context.Background(), o)).seated
}

// SynthesisSeatedForTest reports whether the operator takes its planner's
// server to hold a slot for the synthesis too.
func SynthesisSeatedForTest(o *Operator) bool {
	return o.order.seats.get(seatKey(context.Background(), o)).synth
}

// WaitSeatsForTest waits for the seats in flight to end.
func (o *Operator) WaitSeatsForTest() { o.seatWG.Wait() }

// DraftProbes is draftProbes.
const DraftProbes = draftProbes

// SetProbesForTest sets how many drafts went ahead as probes on o's hub
// model server (DraftProbes: the probes are spent, the planner goes
// first while the order is not known).
func SetProbesForTest(o *Operator, n int) {
	o.order.update(hostIn(context.Background(), o.opts.HubModel), func(f *serverFacts) { f.Probes, f.ProbedAt = n, time.Now() })
}

// ServerOrderFileForTest is the order's file name in the data directory.
const ServerOrderFileForTest = "servers.json"

// SerialNowForTest reports whether o takes its hub model server to run
// one request at a time now (a lesson younger than serialFor).
func SerialNowForTest(o *Operator) bool {
	return o.order.get(hostIn(context.Background(), o.opts.HubModel)).serialNow()
}

// ProbesForTest is how many drafts went ahead as probes on o's server.
func ProbesForTest(o *Operator) int {
	return o.order.get(hostIn(context.Background(), o.opts.HubModel)).Probes
}

// OnWarmWaitForTest has f called when a plan waits for the planner's
// prompt being read ahead (warm.go).
func OnWarmWaitForTest(o *Operator, f func()) {
	o.warming.mu.Lock()
	defer o.warming.mu.Unlock()
	o.warming.onWait = f
}

// VanillaSystemForTest is the plain spoke's system prompt.
const VanillaSystemForTest = vanillaSystem

// CrowdedForTest reports whether the operator takes its planner's server
// to have no third slot (a seat not read beside a draft and a planner).
func CrowdedForTest(o *Operator) bool {
	return o.order.seats.get(seatKey(context.Background(), o)).crowded
}
