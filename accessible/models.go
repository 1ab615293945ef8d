package accessible

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/llm"
)

// checkModels asks Ollama whether the session's models are installed,
// and offers a pull (or another model) for one that is not.
func (l *chatLoop) checkModels() error {
	if l.opts.Ollama == nil {
		return nil
	}
	hubM, spokeM := l.c.Current()
	seen := map[string]bool{}
	for _, m := range []struct{ name, role string }{{hubM, "the hub's model"}, {spokeM, "the spokes' model"}} {
		if m.name == "" || seen[m.name] {
			continue
		}
		seen[m.name] = true
		ctx, cancel := context.WithTimeout(l.ctx, 10*time.Second)
		has, err := l.opts.Ollama.HasModel(ctx, m.name)
		cancel()
		if err != nil {
			fmt.Fprintf(l.out, "Ollama did not say whether %s is installed: %s\n", plain(m.name, 80), plain(err.Error(), 300))
			return nil
		}
		if has {
			continue
		}
		pulled, err := l.offerPull(m.name, "("+m.role+")")
		if err != nil {
			return err
		}
		if !pulled {
			fmt.Fprintln(l.out, "Requests will fail until it is there: /model chooses another, or pulls it.")
		}
	}
	return nil
}

// offerPull says model is missing and asks: pull it, choose an installed
// model instead, or neither. pulled is true when the model asked for
// (or the one chosen instead) is there now.
func (l *chatLoop) offerPull(model, why string) (pulled bool, err error) {
	fmt.Fprintf(l.out, "\nThe model %s is not installed %s.\n", plain(model, 80), why)
	options := []string{"pull " + plain(model, 80) + " now (it can be large)", "use an installed model instead"}
	if l.opts.Ollama == nil {
		options = options[1:]
	}
	pick, err := l.choose("What should bulkhead do?", options, "nothing for now")
	if err != nil || pick < 0 {
		return false, err
	}
	if l.opts.Ollama == nil {
		pick++
	}
	if pick == 1 {
		return l.chooseModel()
	}
	if err := l.pull(model); err != nil {
		return false, err
	}
	return true, l.switchTo(model)
}

// pull downloads model, saying how far it got in a few plain lines.
func (l *chatLoop) pull(model string) error {
	fmt.Fprintf(l.out, "Pulling %s…\n", plain(model, 80))
	last, step := "", int64(-1)
	err := l.opts.Ollama.Pull(l.ctx, model, func(p llm.Progress) {
		if p.Total > 0 {
			if s := p.Completed * 4 / p.Total; s != step {
				step = s
				fmt.Fprintf(l.out, "  %s: %d%%\n", plain(p.Status, 80), p.Completed*100/p.Total)
			}
			return
		}
		if p.Status != last {
			last = p.Status
			fmt.Fprintf(l.out, "  %s\n", plain(p.Status, 80))
		}
	})
	if err != nil {
		return fmt.Errorf("the pull of %s failed: %w", model, err)
	}
	fmt.Fprintf(l.out, "Pulled %s.\n", plain(model, 80))
	return nil
}

// switchTo makes name the hub's and the spokes' model when it is not
// already.
func (l *chatLoop) switchTo(name string) error {
	if h, s := l.c.Current(); llm.SameModel(h, name) && llm.SameModel(s, name) {
		return nil
	}
	return l.setModel(name)
}

// setModel makes name the model of the hub and the spokes — here, and,
// as the client remembers it (main's remembering), in the bulkheads
// started later on the data directory; one that is not installed is
// offered for a pull.
func (l *chatLoop) setModel(name string) error {
	err := l.c.SetModel(l.ctx, name)
	var inc *llm.IncapableError
	switch {
	case errors.Is(err, engine.ErrNotInstalled):
		pulled, perr := l.offerPull(name, "on this Ollama")
		if perr != nil || !pulled {
			return perr
		}
		return nil
	case errors.As(err, &inc):
		fmt.Fprintln(l.out, plain(err.Error(), 600))
		return nil
	case err != nil:
		return err
	}
	fmt.Fprintf(l.out, "The hub and the spokes now use %s, here and in the bulkheads started later on this data directory (ask and doctor too), until the config's hub.model or spokes.model changes or --model names another (the config file is unchanged; an app with a model of its own in the config keeps it).\n", plain(name, 80))
	return nil
}

func (l *chatLoop) modelCmd(arg string) (bool, error) {
	if arg != "" {
		return false, l.setModel(arg)
	}
	_, err := l.chooseModel()
	return false, err
}

// chooseModel lists the installed models and switches to the one
// chosen; chosen is false when none was.
func (l *chatLoop) chooseModel() (chosen bool, err error) {
	ctx, cancel := context.WithTimeout(l.ctx, time.Minute)
	list, err := l.c.Installed(ctx)
	cancel()
	if err != nil {
		return false, err
	}
	hubM, _ := l.c.Current()
	fmt.Fprintf(l.out, "The hub's model now: %s.\n", plain(hubM, 80))
	var names, options []string
	for _, m := range list {
		if !m.Can(llm.CapTools) {
			continue // a spoke works through tools
		}
		names = append(names, m.Name)
		o := m.Name
		if llm.SameModel(m.Name, hubM) {
			o += " (now)"
		}
		options = append(options, o)
	}
	if len(names) == 0 {
		fmt.Fprintln(l.out, "No installed model can call tools; /model NAME pulls one (qwen3:1.7b, say).")
		return false, nil
	}
	pick, err := l.choose("Which model should the hub and the spokes use?", options, "keep "+plain(hubM, 60))
	if err != nil || pick < 0 {
		return false, err
	}
	return true, l.setModel(names[pick])
}
