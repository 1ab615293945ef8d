package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bulkhead-dev/bulkhead/internal/termtext"
)

// Summary is the figures of one model in one mode.
type Summary struct {
	Model string `json:"model"`
	Mode  string `json:"mode"`
	// Tasks and Completed count the runs without an injection; Utility
	// is their ratio.
	Tasks     int     `json:"tasks"`
	Completed int     `json:"completed"`
	Utility   float64 `json:"utility"`
	// Attacked counts the runs with an injection; CompletedUnderAttack
	// those whose task was still done, AttackSuccesses those where the
	// attacker's goal happened.
	Attacked             int     `json:"attacked_runs"`
	CompletedUnderAttack int     `json:"completed_under_attack"`
	UtilityUnderAttack   float64 `json:"utility_under_attack"`
	AttackSuccesses      int     `json:"attack_successes"`
	ASR                  float64 `json:"attack_success_rate"`
	// Per run, over every run: dialogs asked, of them needed (judged
	// expected by the plan), model calls and tokens.
	Dialogs      float64 `json:"dialogs_per_run"`
	Needed       float64 `json:"needed_dialogs_per_run"`
	Calls        float64 `json:"calls_per_run"`
	PromptTokens float64 `json:"prompt_tokens_per_run"`
	EvalTokens   float64 `json:"eval_tokens_per_run"`
	// Medians over the runs: time to the first answer token (of the runs
	// that had one) and to the end of the turn.
	FirstTokenMS float64 `json:"median_first_token_ms"`
	TotalMS      float64 `json:"median_total_ms"`
	// PromptMSPerToken is how long the server took to read a prompt
	// token, over every run (its prompt time over its prompt tokens): low
	// when the prompts' prefixes were cached.
	PromptMSPerToken float64 `json:"prompt_ms_per_token"`
	promptMS         float64
	// Plan validity: Plans the hub made, Retried those whose first plan
	// was unusable, Fallback those where both were (the plain model
	// answered).
	Plans    int `json:"plans"`
	Retried  int `json:"plans_retried"`
	Fallback int `json:"plans_fallback"`
	Errors   int `json:"errors"`
}

// Summarize groups results by model and mode, in the order they came.
func Summarize(results []Result) []Summary {
	var out []Summary
	index := map[[2]string]int{}
	var firsts, totals [][]float64
	for _, r := range results {
		k := [2]string{r.Model, r.Mode}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, Summary{Model: r.Model, Mode: r.Mode})
			firsts, totals = append(firsts, nil), append(totals, nil)
		}
		s := &out[i]
		if r.Injection == "" {
			s.Tasks++
			if r.Completed {
				s.Completed++
			}
		} else {
			s.Attacked++
			if r.Completed {
				s.CompletedUnderAttack++
			}
			if r.Attacked {
				s.AttackSuccesses++
			}
		}
		s.Dialogs += float64(r.Dialogs)
		s.Needed += float64(r.Needed)
		s.Calls += float64(r.Calls)
		s.PromptTokens += float64(r.PromptTokens)
		s.EvalTokens += float64(r.EvalTokens)
		s.promptMS += r.PromptMS
		if r.FirstTokenMS >= 0 {
			firsts[i] = append(firsts[i], r.FirstTokenMS)
		}
		totals[i] = append(totals[i], r.TotalMS)
		if r.Planned {
			s.Plans++
		}
		if r.Retried {
			s.Retried++
		}
		if r.Fallback {
			s.Fallback++
		}
		if r.Error != "" {
			s.Errors++
		}
	}
	for i := range out {
		s := &out[i]
		n := float64(s.Tasks + s.Attacked)
		s.Utility = ratio(s.Completed, s.Tasks)
		s.UtilityUnderAttack = ratio(s.CompletedUnderAttack, s.Attacked)
		s.ASR = ratio(s.AttackSuccesses, s.Attacked)
		if s.PromptTokens > 0 {
			s.PromptMSPerToken = s.promptMS / s.PromptTokens
		}
		if n > 0 {
			s.Dialogs /= n
			s.Needed /= n
			s.Calls /= n
			s.PromptTokens /= n
			s.EvalTokens /= n
		}
		s.FirstTokenMS, s.TotalMS = median(firsts[i]), median(totals[i])
	}
	return out
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return -1
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// Model is a model as the report names it.
type Model struct {
	Name   string `json:"name"`
	Digest string `json:"digest,omitempty"`
}

// Report is what a bench keeps and prints.
type Report struct {
	Version   string    `json:"bulkhead_version"`
	Date      time.Time `json:"date"`
	Host      string    `json:"ollama_host"`
	Policy    string    `json:"policy"`
	Models    []Model   `json:"models"`
	Summaries []Summary `json:"summaries"`
	Results   []Result  `json:"results"`
}

// Save writes the report as JSON under dir (made if need be), named by
// its date, and returns the file's path.
func (r Report) Save(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "bench-"+r.Date.UTC().Format("20060102T150405Z")+".json")
	return p, os.WriteFile(p, append(b, '\n'), 0o600)
}

// Print writes the report as two tables, a row per model and mode in
// each — what it did (utility, under attack, attacks that succeeded,
// dialogs, errors) and what it cost (calls, tokens, time, plans) — so
// that each fits a terminal of 110 columns.
func (r Report) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tmode\tutility\tunder attack\tattack success\tdialogs (needed)\terrors")
	for _, s := range r.Summaries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.1f (%.1f)\t%d\n",
			modelCell(s.Model), s.Mode,
			frac(s.Completed, s.Tasks), frac(s.CompletedUnderAttack, s.Attacked), frac(s.AttackSuccesses, s.Attacked),
			s.Dialogs, s.Needed, s.Errors)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tmode\tcalls\tprompt tok\tms/tok\teval tok\tfirst words\ttotal\tplans")
	for _, s := range r.Summaries {
		plans := "—"
		if s.Plans > 0 {
			plans = fmt.Sprintf("%d/%d/%d", s.Retried, s.Fallback, s.Plans)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.0f\t%.2f\t%.0f\t%s\t%s\t%s\n",
			modelCell(s.Model), s.Mode, s.Calls, s.PromptTokens, s.PromptMSPerToken, s.EvalTokens, dur(s.FirstTokenMS), dur(s.TotalMS), plans)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprint(w, "ms/tok: the server's time to read a prompt token (low when its prefix was cached)\n"+
		"first words: of the answer, or of a draft that was kept; plans: retried/fell back/made\n")
	return err
}

// modelCell is a model's name as a table cell: clean, at most 20 cells.
func modelCell(name string) string { return clip(termtext.OneLine(name), 20) }

// PrintRuns writes a line per run: what failed and why.
func (r Report) PrintRuns(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tmode\trun\tdone\tattacked\tdialogs\tcalls\tfirst token\ttotal\twhy")
	for _, x := range r.Results {
		why := x.Failure
		if x.Error != "" {
			why = x.Error
		}
		if x.Fallback {
			why = strings.TrimSpace("plan fell back; " + why)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", termtext.Sanitize(x.Model), x.Mode, x.Run,
			yes(x.Completed), yesIf(x.Injection != "", x.Attacked), x.Dialogs, x.Calls, dur(x.FirstTokenMS), dur(x.TotalMS), termtext.Sanitize(clip(why, 100)))
	}
	return tw.Flush()
}

func frac(a, b int) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%d/%d (%.0f%%)", a, b, 100*float64(a)/float64(b))
}

func dur(ms float64) string {
	switch {
	case ms < 0:
		return "—"
	case ms < 10000:
		return fmt.Sprintf("%.0f ms", ms)
	default:
		return fmt.Sprintf("%.1f s", ms/1000)
	}
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func yesIf(applies, b bool) string {
	if !applies {
		return "—"
	}
	return yes(b)
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
