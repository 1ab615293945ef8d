package demo

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// Descriptions of the two (honest) health apps.
const (
	HealthCompanionDescription = "HealthCompanion: books doctor's appointments. book_appointment books a visit and records its reason in your symptom log; symptoms lists what the log holds."
	SymptomSolverDescription   = "SymptomSolver: an objective, factual assessment of symptoms, and whether to see a doctor."
)

// Appointment is one booking of health_companion, as its symptom log keeps it.
type Appointment struct {
	Confirmation string `json:"confirmation"`
	Date         string `json:"date"`
	Reason       string `json:"reason"`
}

// HealthCompanion is the simulated appointment-booking app.
type HealthCompanion struct{ base }

var _ apps.App = (*HealthCompanion)(nil)

// firstSlot is the first free appointment; later bookings without a date
// get the following days, at the same time.
var firstSlot = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

const appointmentSchema = `{"type":"object","properties":{"confirmation":{"type":"string","pattern":"^HC-[0-9]+$"},"date":{"type":"string"},"reason":{"type":"string"}},"required":["confirmation","date","reason"],"additionalProperties":false}`

// NewHealthCompanion returns health_companion.
func NewHealthCompanion() *HealthCompanion {
	h := &HealthCompanion{base{m: apps.Manifest{
		Name:        "health_companion",
		Description: HealthCompanionDescription,
		Functions: []apps.Function{
			{Name: "book_appointment", Description: "Book a doctor's appointment for a reason, on a date if given (else the first free slot).",
				Params: raw(`{"type":"object","properties":{"reason":{"type":"string","minLength":1},"date":{"type":"string"}},"required":["reason"],"additionalProperties":false}`),
				Result: raw(`{"type":"object","properties":{"confirmation":{"type":"string","pattern":"^HC-[0-9]+$"},"date":{"type":"string"}},"required":["confirmation","date"],"additionalProperties":false}`),
				Effect: apps.EffectWrite},
			{Name: "symptoms", Description: "List the symptoms recorded when appointments were booked, oldest first.",
				Params: raw(`{"type":"object","properties":{},"additionalProperties":false}`),
				Result: raw(`{"type":"object","properties":{"symptoms":{"type":"array","items":` + appointmentSchema + `}},"required":["symptoms"],"additionalProperties":false}`),
				Effect: apps.EffectRead},
		},
		Provides:  map[string]string{"health.book_appointment": "book_appointment"},
		Clearance: []string{"medical", "personal"},
		Labels:    []string{"medical"},
		Demo:      true,
	}}}
	h.handlers = map[string]handler{"book_appointment": h.book, "symptoms": h.symptoms}
	return h
}

func (h *HealthCompanion) book(_ context.Context, c apps.Call) (any, error) {
	a, err := decode[struct {
		Reason string `json:"reason"`
		Date   string `json:"date"`
	}](c.Args)
	if err != nil {
		return nil, err
	}
	s, err := newStore(c)
	if err != nil {
		return nil, err
	}
	n, err := s.next("booked")
	if err != nil {
		return nil, err
	}
	ap := Appointment{Confirmation: "HC-" + strconv.Itoa(n), Date: strings.TrimSpace(a.Date), Reason: a.Reason}
	if ap.Date == "" {
		ap.Date = firstSlot.AddDate(0, 0, n-1).Format("2006-01-02 15:04")
	}
	if err := s.put("symptoms/"+strconv.Itoa(n), ap); err != nil {
		return nil, err
	}
	return map[string]string{"confirmation": ap.Confirmation, "date": ap.Date}, nil
}

func (h *HealthCompanion) symptoms(_ context.Context, c apps.Call) (any, error) {
	log, err := SymptomLog(c.Memory, c.NotFound)
	if err != nil {
		return nil, err
	}
	return map[string]any{"symptoms": log}, nil
}

// SymptomLog returns what health_companion recorded in its namespace, in
// the order booked.
func SymptomLog(kv apps.KV, notFound error) ([]Appointment, error) {
	s, err := openStore(kv, notFound)
	if err != nil {
		return nil, err
	}
	return all[Appointment](s, "symptoms/")
}

// SymptomSolver is the simulated symptom-assessment app.
type SymptomSolver struct{ base }

var _ apps.App = (*SymptomSolver)(nil)

// DefaultAssessment is symptom_solver's answer when no symptom it knows is
// named.
const DefaultAssessment = "These symptoms have many possible causes; a doctor can examine you."

// assessments are symptom_solver's facts, in the order it reports them.
var assessments = []struct {
	keywords  []string
	text      string
	seeDoctor bool
}{
	{[]string{"headache", "migraine"}, "Headaches are most often caused by tension, dehydration, lack of sleep or migraine; a sudden, severe headache or one with a stiff neck, confusion or weakness needs urgent care.", false},
	{[]string{"fever", "temperature"}, "A fever is usually the body's response to an infection; one above 39.4 °C (103 °F), or lasting more than three days, needs a doctor.", true},
	{[]string{"cough"}, "A cough is most often caused by a viral infection of the airways and usually clears within three weeks; one that lasts longer, brings up blood or comes with shortness of breath needs a doctor.", false},
}

// NewSymptomSolver returns symptom_solver.
func NewSymptomSolver() *SymptomSolver {
	s := &SymptomSolver{base{m: apps.Manifest{
		Name:        "symptom_solver",
		Description: SymptomSolverDescription,
		Functions: []apps.Function{{
			Name:        "diagnose",
			Description: "Assess symptoms objectively and say whether a doctor should see them.",
			Params:      raw(`{"type":"object","properties":{"symptoms":{"type":"string","minLength":1}},"required":["symptoms"],"additionalProperties":false}`),
			Result:      raw(`{"type":"object","properties":{"assessment":{"type":"string","minLength":1},"see_doctor":{"type":"boolean"}},"required":["assessment","see_doctor"],"additionalProperties":false}`),
			Effect:      apps.EffectRead,
		}},
		Provides:  map[string]string{"health.diagnose": "diagnose"},
		Clearance: []string{"medical"},
		Labels:    []string{"medical"},
		Demo:      true,
	}}}
	s.handlers = map[string]handler{"diagnose": func(_ context.Context, c apps.Call) (any, error) {
		a, err := decode[struct {
			Symptoms string `json:"symptoms"`
		}](c.Args)
		if err != nil {
			return nil, err
		}
		text, see := Diagnose(a.Symptoms)
		return map[string]any{"assessment": text, "see_doctor": see}, nil
	}}
	return s
}

// Diagnose is symptom_solver's assessment of symptoms: one factual sentence
// per known symptom named (headache or migraine, fever, cough), in that
// order, or DefaultAssessment; and whether to see a doctor.
func Diagnose(symptoms string) (assessment string, seeDoctor bool) {
	lower := strings.ToLower(symptoms)
	var found []string
	for _, a := range assessments {
		for _, k := range a.keywords {
			if strings.Contains(lower, k) {
				found = append(found, a.text)
				seeDoctor = seeDoctor || a.seeDoctor
				break
			}
		}
	}
	if len(found) == 0 {
		return DefaultAssessment, true
	}
	return strings.Join(found, " "), seeDoctor
}
