package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// TestResizeNeverOverflows walks every scene through sizes from 40x10 to
// 200x60, odd and even: View must not panic, must be exactly the
// terminal's height, and no line may be wider than the terminal, neither
// in the parts View joins nor in what it returns.
func TestResizeNeverOverflows(t *testing.T) {
	t.Parallel()
	extra := []struct {
		name string
		prep func(d *driver)
	}{
		{"help", func(d *driver) { d.key(char('?')) }},
		{"thinking", func(d *driver) { d.key(ctrl('t')) }},
		{"typed", func(d *driver) { d.typeText(strings.Repeat("a long line of input ", 12)) }},
	}
	for _, sc := range scenes {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			d := sc.build(t, 80, 24)
			check(t, d, sc.name)
			for _, x := range extra {
				x.prep(d)
				check(t, d, sc.name+"+"+x.name)
				d.key(keyEsc)
			}
		})
	}
}

func check(t *testing.T, d *driver, name string) {
	t.Helper()
	for _, w := range []int{40, 41, 57, 80, 99, 120, 163, 200} {
		for _, h := range []int{10, 11, 17, 24, 40, 60} {
			d.send(tea.WindowSizeMsg{Width: w, Height: h})
			// The parts must fit on their own, not only after View's clip.
			top, status := d.model().parts()
			if len(top) != h-1 {
				t.Fatalf("%s at %dx%d: %d lines above the status bar, want %d", name, w, h, len(top), h-1)
			}
			for i, l := range append(top, status) {
				if lw := lipgloss.Width(l); lw > w {
					t.Fatalf("%s at %dx%d: part line %d is %d wide:\n%s", name, w, h, i, lw, l)
				}
			}
			if d.model().overlay != overlayNone {
				if dw := lipgloss.Width(d.model().dialog()); dw > w {
					t.Fatalf("%s at %dx%d: dialog is %d wide", name, w, h, dw)
				}
			}
			content := d.m.View().Content
			lines := strings.Split(content, "\n")
			if len(lines) != h {
				t.Fatalf("%s at %dx%d: %d lines", name, w, h, len(lines))
			}
			for i, l := range lines {
				if lw := lipgloss.Width(l); lw > w {
					t.Fatalf("%s at %dx%d: line %d is %d wide:\n%s", name, w, h, i, lw, l)
				}
			}
		}
	}
	// And the smallest sizes below the supported minimum do not panic.
	for _, s := range [][2]int{{1, 1}, {10, 3}, {39, 9}, {0, 0}} {
		d.send(tea.WindowSizeMsg{Width: s[0], Height: s[1]})
		_ = d.m.View()
	}
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
}

// The full screens in each of their states fit every size too.
func TestScreensNeverOverflow(t *testing.T) {
	t.Parallel()
	d, _ := managerRig(t, 80, 24)
	d.key(ctrl('g'))
	d.idle()
	for _, st := range []struct {
		name string
		prep func()
	}{
		{"detail", func() { d.key(keyDown); d.key(keyEnter) }},
		{"filtering", func() { d.key(keyEsc); d.key(char('/')); d.typeText("mail drive") }},
		{"confirm", func() { d.key(keyEnter); d.key(char('X')) }},
		{"log", func() { d.key(char('n')); d.key(keyTab) }},
		{"log detail", func() { d.key(keyEsc); d.key(keyDown); d.key(keyDown); d.key(keyDown); d.key(keyEnter) }},
		{"log detail scrolled", func() { d.key(keyPgDown); d.key(keyDown) }},
	} {
		st.prep()
		check(t, d, "manager "+st.name)
	}
	a := appsRig(t, 80, 24, &appSwitch{off: map[string]bool{}})
	a.key(ctrl('a'))
	a.idle()
	check(t, a, "apps")
	a.key(keyEnter)
	check(t, a, "apps detail")

	mv, _ := memoryRig(t, 80, 24)
	mv.key(ctrl('e'))
	mv.idle()
	for _, st := range []struct {
		name string
		prep func()
	}{
		{"list", func() {}},
		{"detail", func() { mv.key(keyDown); mv.key(keyEnter) }},
		{"detail scrolled", func() { mv.key(keyPgDown); mv.key(keyDown) }},
		{"confirm", func() { mv.key(char('f')) }},
		{"filtering", func() { mv.key(char('n')); mv.key(keyEsc); mv.key(char('/')); mv.typeText("bob") }},
	} {
		st.prep()
		check(t, mv, "memory "+st.name)
	}
}
