package tui

// screenFull reports whether a full screen is up (under a permission
// dialog, too).
func (m Model) screenFull() bool {
	o := m.overlay
	if o == overlayPermission {
		o = m.under
	}
	return o.full()
}

// screenView draws the full screen open, if any — the permission manager,
// the apps or the memory screen — also while a permission dialog covers
// it.
func (m Model) screenView() (string, bool) {
	o := m.overlay
	if o == overlayPermission {
		o = m.under
	}
	h := m.height - 1
	switch {
	case o == overlayManager && m.mgr != nil:
		return m.mgr.view(m.th, m.width, h, m.now(), m.formView(formGrants)), true
	case o == overlayApps && m.appsv != nil:
		return m.appsv.view(m.th, m.width, h, m.bar.working, m.opts.Apps != nil), true
	case o == overlayMemory && m.memv != nil:
		return m.memv.view(m.th, m.width, h, m.now(), m.formView(formMemory)), true
	}
	return "", false
}
