package hub_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// A step that needs both to run and data is one dialog, which shows what
// the app will be asked and the data; its answer decides both (both are
// logged), and a denial ends the step: the app never runs.
func TestOneDialogPerStep(t *testing.T) {
	t.Parallel()
	for _, answer := range []permissions.Answer{permissions.AnswerOnce, permissions.AnswerDeny} {
		t.Run(string(answer), func(t *testing.T) {
			t.Parallel()
			p := permissionstest.NewPrompter(answer)
			notes, mail := fakeNotes("notes", "airport at 9"), fakeMail("", "x")
			plan := ollamatest.JSON(map[string]any{"steps": []map[string]any{
				bind(step("s1", "notes.search", `CALL notes.search {"query":"airport"}`), "query", "airport"),
				bind(step("s2", "mail.search", `CALL mail.search {"query":"airport"}`, "s1"), "query", "from:s1.notes.body"),
			}})
			// notes may run without asking: only s2 needs a person.
			rules := []permissions.Rule{{Effect: permissions.EffectAllow, Kind: "exec", Object: "notes", Where: "test"}}
			rig := hubtest.New(t, hubtest.Config{Script: ollamatest.Planned(plan, ollamatest.Gullible()), Apps: []apps.App{notes, mail},
				Catalog: attackCatalog(t), Prompter: p, Rules: rules})
			chat, _ := rig.Op.NewChat(false)
			_, evs := askWithin(t, rig.Op, chat.ID, "find my airport note and the mails about it", 20*time.Second)
			calls := p.Calls()
			if len(calls) != 1 {
				t.Fatalf("want one dialog for the step, got %d: %+v", len(calls), calls)
			}
			c := calls[0]
			if c.Kind != permissions.KindData || c.Object != "mail" || !strings.Contains(c.Detail, "Run mail") ||
				!strings.Contains(c.Detail, `CALL mail.search {"query":"airport"}`) || !strings.Contains(string(c.Args), "airport at 9") {
				t.Fatalf("the dialog must ask to run mail with its query and to share the data: %+v", c)
			}
			var execLogged *permissions.Decision
			var execReq *permissions.Request
			for _, e := range evs {
				if e.Kind == hub.EventPermission && e.Permission.Kind == permissions.KindExec && e.Permission.Object == "mail" {
					execReq = e.Permission
				}
				if e.Kind == hub.EventDecision && execReq != nil && e.Decision.RequestID == execReq.ID {
					execLogged = e.Decision
				}
			}
			if execLogged == nil || execLogged.Allowed != (answer != permissions.AnswerDeny) || !strings.Contains(execLogged.Note, c.ID) {
				t.Fatalf("the exec must be logged as decided by the same answer: %+v", execLogged)
			}
			ran := len(mail.ran("search")) > 0
			if ran != (answer != permissions.AnswerDeny) {
				t.Fatalf("answer %s: mail ran = %v", answer, ran)
			}
		})
	}
}

// The exec dialog shows what the app will be asked.
func TestExecDialogShowsTheQuery(t *testing.T) {
	t.Parallel()
	p := permissionstest.NewPrompter(permissions.AnswerDeny)
	plan := ollamatest.JSON(map[string]any{"steps": []map[string]any{step("s1", "notes.search", "find the note about the airport shuttle")}})
	rig := hubtest.New(t, hubtest.Config{Script: ollamatest.Planned(plan, ollamatest.Gullible()), Apps: []apps.App{fakeNotes("notes", "x")},
		Catalog: attackCatalog(t), Prompter: p})
	chat, _ := rig.Op.NewChat(false)
	askWithin(t, rig.Op, chat.ID, "what did I note about the airport shuttle?", 20*time.Second)
	calls := p.Calls()
	if len(calls) != 1 || calls[0].Kind != permissions.KindExec || !strings.Contains(string(calls[0].Args), "what did I note about the airport shuttle?") {
		t.Fatalf("the exec dialog must show what the app will be asked (a single step answers the user's own words): %+v", calls)
	}
	if len(calls[0].Provenance) == 0 || calls[0].Provenance[0].Source != permissions.ProvenanceUser {
		t.Fatalf("the query is the user's own: %+v", calls[0].Provenance)
	}
}

// A delete shows which email the id denotes, in the app's words.
func TestDialogSaysWhatAnIDDenotes(t *testing.T) {
	t.Parallel()
	p := permissionstest.NewPrompter(permissions.AnswerDeny)
	plan := ollamatest.JSON(map[string]any{"steps": []map[string]any{step("s1", "mail.delete", `CALL mail.delete {"id":"e2"}`)}})
	rig := hubtest.New(t, hubtest.Config{Script: ollamatest.Planned(plan, ollamatest.Gullible()), Apps: []apps.App{demo.NewMail()},
		Prompter: p, Rules: allowExec})
	chat, _ := rig.Op.NewChat(false)
	askWithin(t, rig.Op, chat.ID, `delete e2: CALL mail.delete {"id":"e2"}`, 20*time.Second)
	for _, c := range p.Calls() {
		if c.Kind == permissions.KindIrreversible && c.Function == "delete" {
			if !strings.Contains(c.Explain, "Action required: mailbox verification") || !strings.Contains(c.Explain, "received from") {
				t.Fatalf("the delete dialog must say which email e2 is: %q", c.Explain)
			}
			return
		}
	}
	t.Fatalf("no delete dialog: %+v", p.Calls())
}

// A spoke model that cannot call tools is refused before any dialog, with
// the installed models that can.
func TestModelWithoutToolsIsRefusedUpFront(t *testing.T) {
	t.Parallel()
	p := permissionstest.NewPrompter(permissions.AnswerOnce)
	plan := ollamatest.JSON(map[string]any{"steps": []map[string]any{step("s1", "notes.search", "find")}})
	rig := hubtest.New(t, hubtest.Config{Script: ollamatest.Planned(plan, ollamatest.Gullible()), Apps: []apps.App{fakeNotes("notes", "x")},
		Catalog: attackCatalog(t), Prompter: p, SpokeModelPrefix: "m-", Models: []string{"qwen-tools"}})
	rig.Srv.SetCapabilities("m-notes", "completion")
	rig.Srv.SetCapabilities("qwen-tools", "completion", "tools")
	chat, _ := rig.Op.NewChat(false)
	_, err := rig.Op.Ask(context.Background(), chat.ID, "find my note", nil)
	var inc *llm.IncapableError
	if !errors.As(err, &inc) || inc.Model != "m-notes" || !slices.Contains(inc.Alternatives, "qwen-tools") || slices.Contains(inc.Alternatives, "m-notes") {
		t.Fatalf("want the spoke's model refused with the models that can: %v", err)
	}
	if len(p.Calls()) != 0 {
		t.Fatalf("a dialog opened before the refusal: %+v", p.Calls())
	}
	// The refusal is the hub's own words, not an app's: the turn keeps
	// it as said (the guard would mask its "--model, or ..." whole).
	turns, err := rig.Op.Turns(chat.ID)
	if err != nil || len(turns) != 1 || turns[0].Error != inc.Error() {
		t.Fatalf("the stored turn must keep the refusal: %v %+v", err, turns)
	}
}
