package hub

import "encoding/json"

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
