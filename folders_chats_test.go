package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChatsBelongToFolders: a chat records the folder it was started in;
// `chats list` shows it and filters by it; --continue resumes the last
// chat of this folder, never another's; and a dialog of a chat resumed
// in another folder names both — where its apps work now, and where the
// chat began.
func TestChatsBelongToFolders(t *testing.T) {
	g := newGate()
	g.open()
	common := servingArgs(t, g)
	a, b := filepath.Join(t.TempDir(), "projA"), filepath.Join(t.TempDir(), "projB")
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	in := func(folder string, args ...string) (string, string, int) {
		t.Helper()
		out, errOut, code, _, _ := asBulkhead(t, nil, append(append(args, "--workspace", folder), common...)...)
		return out, errOut, code
	}
	out, errOut, code := in(a, "ask", "--json", "hello from A")
	if code != 0 {
		t.Fatalf("ask in A: exit %d %s", code, errOut)
	}
	chatA, _ := events(t, out)[0]["chat"].(string)
	out, errOut, code = in(b, "ask", "--json", "hello from B")
	if code != 0 {
		t.Fatalf("ask in B: exit %d %s", code, errOut)
	}
	chatB, _ := events(t, out)[0]["chat"].(string)

	all, _, _ := in(a, "chats", "list")
	if !strings.Contains(all, chatA) || !strings.Contains(all, chatB) || !strings.Contains(all, "in "+a) || !strings.Contains(all, "in "+b) {
		t.Fatalf("chats list must show every chat with its folder:\n%s", all)
	}
	here, _, _ := in(a, "chats", "list", "--here")
	if !strings.Contains(here, chatA) || strings.Contains(here, chatB) {
		t.Fatalf("chats list --here in A:\n%s", here)
	}
	other, _, _ := in(a, "chats", "list", "--folder", b)
	if strings.Contains(other, chatA) || !strings.Contains(other, chatB) {
		t.Fatalf("chats list --folder B:\n%s", other)
	}

	// --continue in A resumes A's chat, though B's was used last.
	out, errOut, code = lineChatIn(t, a, common, "--continue")
	if code != 0 {
		t.Fatalf("--continue in A: exit %d %s\n%s", code, errOut, out)
	}
	shown, _, _ := in(a, "chats", "show", chatA)
	if !strings.Contains(shown, "what did I say") {
		t.Fatalf("--continue in A did not resume A's chat:\n%s", shown)
	}
	shownB, _, _ := in(a, "chats", "show", chatB)
	if strings.Contains(shownB, "what did I say") {
		t.Fatal("--continue in A resumed B's chat")
	}

	// A's chat resumed in B: the dialog names both folders.
	out, _, _ = in(b, "ask", "--json", "--on-prompt=deny", "--chat", chatA, "what does the timepiece say")
	var perm map[string]any
	for _, ev := range events(t, out) {
		if ev["type"] == "permission" {
			perm = ev
		}
	}
	if perm == nil || perm["folder"] != b || perm["chat_folder"] != a {
		t.Fatalf("the dialog of A's chat run in B must name both folders: %v\n%s", perm, out)
	}
	// In its own folder, nothing of the kind.
	out, _, _ = in(a, "ask", "--json", "--on-prompt=deny", "--chat", chatA, "what does the timepiece say")
	if strings.Contains(out, "chat_folder") {
		t.Fatalf("a chat in its own folder names another:\n%s", out)
	}
}

// lineChatIn runs the line-mode chat in folder with one request.
func lineChatIn(t *testing.T, folder string, common []string, args ...string) (string, string, int) {
	t.Helper()
	return lineChat(t, []typed{{"request: ", 1, false, "what did I say"}}, append(append(args, "--workspace", folder), common...)...)
}
