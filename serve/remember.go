package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/bulkhead-dev/bulkhead/config"
)

// The model /model chose last is remembered in the data directory, with
// the configured models it was chosen over: a bulkhead started later
// uses it (Remembered) while the configuration still says what it said
// then and no flag or variable names a model. Editing hub.model or
// spokes.model, or --model, goes back to what they say.

const chosenFile = "chosen-model.json"

type chosen struct {
	Model string `json:"model"`
	// Over are the hub's and the spokes' models configured when it was
	// chosen.
	Over [2]string `json:"over"`
}

// Remember keeps name as the model chosen over cfg's.
func Remember(dataDir, name string, over [2]string) error {
	b, err := json.Marshal(chosen{Model: name, Over: over})
	if err != nil {
		return err
	}
	tmp := filepath.Join(dataDir, chosenFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dataDir, chosenFile))
}

// Remembered makes the model /model chose last cfg's hub's and spokes'
// model, when cfg still configures what it was chosen over and neither
// came from a flag or a variable; it says whether it did.
func Remembered(cfg *config.Config) bool {
	b, err := os.ReadFile(filepath.Join(cfg.DataDir, chosenFile))
	if err != nil {
		return false
	}
	var c chosen
	if json.Unmarshal(b, &c) != nil || c.Model == "" || c.Over != [2]string{cfg.Hub.Model, cfg.Spokes.Model} {
		return false
	}
	for _, k := range []string{"hub.model", "spokes.model"} {
		if src := cfg.From[k]; strings.HasPrefix(src, "--") || strings.HasPrefix(src, "$") {
			return false
		}
	}
	cfg.Hub.Model, cfg.Spokes.Model = c.Model, c.Model
	if cfg.From == nil {
		cfg.From = map[string]string{}
	}
	cfg.From["hub.model"], cfg.From["spokes.model"] = "/model", "/model"
	return true
}
