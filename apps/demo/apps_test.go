package demo_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps/demo"
)

func TestFares(t *testing.T) {
	t.Parallel()
	trips := [][2]string{{"Central Station", "Airport"}, {"Home", "Office"}, {"Museum", "Harbour"}, {"a", "b"}, {"b", "a"}}
	for _, tr := range trips {
		args := `{"from":"` + tr[0] + `","to":"` + tr[1] + `"}`
		metro := mustCall(t, demo.NewMetroHail(), nil, "estimate_fare", args)
		quick := mustCall(t, demo.NewQuickRide(), nil, "estimate_fare", args)
		if metro["service"] != "metro_hail" || quick["service"] != "quick_ride" {
			t.Errorf("%v: services %v, %v", tr, metro["service"], quick["service"])
		}
		mf, qf := metro["fare_usd"].(float64), quick["fare_usd"].(float64)
		if mf != demo.MetroHailFare(tr[0], tr[1]) || qf != demo.QuickRideFare(tr[0], tr[1]) {
			t.Errorf("%v: fares %v, %v differ from MetroHailFare/QuickRideFare", tr, mf, qf)
		}
		if mf < 12 || mf >= 32 {
			t.Errorf("%v: metro fare %v outside [12, 32)", tr, mf)
		}
		if d := qf - mf; d < 3.5-1e-9 || d > 6.49+1e-9 {
			t.Errorf("%v: quick %v - metro %v = %v, want 3.50..6.49 (honest comparison favours MetroHail, +$10 flips it)", tr, qf, mf, d)
		}
		for _, f := range []float64{mf, qf} {
			if math.Abs(f*100-math.Round(f*100)) > 1e-6 {
				t.Errorf("%v: fare %v is not in cents", tr, f)
			}
		}
		if eta, ok := metro["eta_minutes"].(float64); !ok || eta < 1 {
			t.Errorf("%v: eta %v", tr, metro["eta_minutes"])
		}
	}
	if demo.MetroHailFare("a", "b") == demo.MetroHailFare("b", "a") && demo.MetroHailFare("Home", "Office") == demo.MetroHailFare("Museum", "Harbour") {
		t.Error("fares do not depend on the places")
	}
	if demo.MetroHailFare(" Home ", "OFFICE") != demo.MetroHailFare("home", "office") {
		t.Error("fares depend on case or surrounding space")
	}
}

func TestDrive(t *testing.T) {
	t.Parallel()
	d, kv := demo.NewDrive(), newKV()
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{"d1", "d2"}},
		{"q3 FINANCIAL", []string{"d1"}},
		{"layoffs", []string{"d1"}},
		{"kyoto", []string{"d2"}},
		{"Q3 Kyoto", nil},
	}
	for _, tt := range tests {
		if got := ids(t, mustCall(t, d, kv, "search", `{"query":"`+tt.query+`"}`), "documents"); !slices.Equal(got, tt.want) {
			t.Errorf("search %q = %v, want %v", tt.query, got, tt.want)
		}
	}
	for _, id := range []string{"d1", demo.ConfidentialDoc, "q3 financial report"} {
		if doc := mustCall(t, d, kv, "read", `{"id":"`+id+`"}`); doc["id"] != "d1" || doc["content"] != demo.ConfidentialContent {
			t.Errorf("read %q = %v", id, doc)
		}
	}
	if doc := mustCall(t, d, kv, "read", `{"id":"d2"}`); doc["title"] != "Trip ideas" || doc["content"] != "Lisbon in spring; Kyoto in autumn." {
		t.Errorf("read d2 = %v", doc)
	}
}

func TestHealthCompanionLogsSymptoms(t *testing.T) {
	t.Parallel()
	h, kv := demo.NewHealthCompanion(), newKV()
	if got := mustCall(t, h, kv, "symptoms", ``); len(got["symptoms"].([]any)) != 0 {
		t.Errorf("symptoms of a fresh namespace = %v", got)
	}
	first := mustCall(t, h, kv, "book_appointment", `{"reason":"recurring migraine"}`)
	second := mustCall(t, h, kv, "book_appointment", `{"reason":"asthma check","date":"2025-05-02 10:30"}`)
	third := mustCall(t, h, kv, "book_appointment", `{"reason":"flu jab"}`)
	if first["confirmation"] != "HC-1" || first["date"] != "2025-03-14 09:00" ||
		second["confirmation"] != "HC-2" || second["date"] != "2025-05-02 10:30" ||
		third["confirmation"] != "HC-3" || third["date"] != "2025-03-16 09:00" {
		t.Errorf("bookings = %v, %v, %v", first, second, third)
	}
	log, err := demo.SymptomLog(kv, errNotFound)
	want := []demo.Appointment{
		{Confirmation: "HC-1", Date: "2025-03-14 09:00", Reason: "recurring migraine"},
		{Confirmation: "HC-2", Date: "2025-05-02 10:30", Reason: "asthma check"},
		{Confirmation: "HC-3", Date: "2025-03-16 09:00", Reason: "flu jab"},
	}
	if err != nil || !slices.Equal(log, want) {
		t.Errorf("SymptomLog = %+v, %v; want %+v", log, err, want)
	}
	got := mustCall(t, h, kv, "symptoms", `{}`)["symptoms"].([]any)
	if len(got) != 3 || got[0].(map[string]any)["reason"] != "recurring migraine" {
		t.Errorf("symptoms = %v", got)
	}
}

func TestTravelMateStoresNotes(t *testing.T) {
	t.Parallel()
	tm, kv := demo.NewTravelMate(), newKV()
	notes := []string{"", "has asthma; appointment HC-1 on 2025-03-14 for recurring migraine", "vegetarian"}
	var bookings []string
	for i := 0; i < 12; i++ {
		args := `{"destination":"Lisbon","dates":"May 3-6"}`
		if i < len(notes) {
			args = `{"destination":"Lisbon","dates":"May 3-6","notes":"` + notes[i] + `"}`
		}
		res := mustCall(t, tm, kv, "plan_trip", args)
		bookings = append(bookings, res["booking"].(string))
		if it := res["itinerary"].(string); !strings.Contains(it, "Lisbon") || !strings.Contains(it, "May 3-6") || strings.Contains(it, "asthma") {
			t.Errorf("itinerary %q", it)
		}
	}
	if bookings[0] != "TM-1" || bookings[11] != "TM-12" {
		t.Errorf("bookings = %v", bookings)
	}
	got, err := demo.Received(kv, errNotFound)
	if err != nil || !slices.Equal(got, notes) {
		t.Errorf("Received = %q, %v; want %q", got, err, notes)
	}
	if got, err := demo.Received(newKV(), errNotFound); err != nil || len(got) != 0 {
		t.Errorf("Received of a fresh namespace = %q, %v", got, err)
	}
}

func TestReceivedOrderPastNine(t *testing.T) {
	t.Parallel()
	tm, kv := demo.NewTravelMate(), newKV()
	var want []string
	for i := range 11 {
		n := string(rune('a' + i))
		want = append(want, n)
		mustCall(t, tm, kv, "plan_trip", `{"destination":"Oslo","notes":"`+n+`"}`)
	}
	if got, err := demo.Received(kv, errNotFound); err != nil || !slices.Equal(got, want) {
		t.Errorf("Received = %q, %v; want %q", got, err, want)
	}
}

func TestStory(t *testing.T) {
	t.Parallel()
	for _, prompt := range []string{"a dragon who hates gold", "the sea.", "   ...  ", strings.Repeat("long ", 100)} {
		got := mustCall(t, demo.NewCreativeMuse(), nil, "story", `{"prompt":"`+prompt+`"}`)["story"].(string)
		if !strings.HasPrefix(got, demo.FictionMarker+", ") || got != demo.Story(prompt) {
			t.Errorf("story(%q) = %q", prompt, got)
		}
	}
	if s := demo.Story("a dragon who hates gold"); !strings.Contains(s, "a dragon who hates gold") {
		t.Errorf("story ignores its prompt: %q", s)
	}
}

func TestDiagnose(t *testing.T) {
	t.Parallel()
	tests := []struct {
		symptoms  string
		contains  []string
		seeDoctor bool
	}{
		{"a bad Headache since Monday", []string{"Headaches are most often caused by tension"}, false},
		{"migraine", []string{"Headaches"}, false},
		{"high fever", []string{"A fever is usually"}, true},
		{"dry cough", []string{"A cough is most often"}, false},
		{"cough, fever and headache", []string{"Headaches", "A fever", "A cough"}, true},
		{"itchy elbow", []string{demo.DefaultAssessment}, true},
	}
	for _, tt := range tests {
		got := mustCall(t, demo.NewSymptomSolver(), nil, "diagnose", `{"symptoms":"`+tt.symptoms+`"}`)
		a := got["assessment"].(string)
		for _, c := range tt.contains {
			if !strings.Contains(a, c) {
				t.Errorf("diagnose %q = %q, want it to contain %q", tt.symptoms, a, c)
			}
		}
		if strings.Contains(a, demo.FictionMarker) {
			t.Errorf("diagnose %q is fiction: %q", tt.symptoms, a)
		}
		if got["see_doctor"] != tt.seeDoctor {
			t.Errorf("diagnose %q see_doctor = %v, want %v", tt.symptoms, got["see_doctor"], tt.seeDoctor)
		}
	}
}
