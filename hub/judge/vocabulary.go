package judge

import (
	"maps"
	"slices"
	"strings"
)

// vocabulary is every word the hub reads around a value: the imperative
// verbs of requests (requestVerbs), determiners, pronouns, prepositions, "please", the
// conjunctions that join requests, a few words of asking, and the nouns
// of what the apps act on. It is closed on purpose: a word it lacks
// makes the step ask, never refuse. Words that open a question (what,
// when, …) are read only there (questionOpeners).
// requestVerbs are the verbs of requests.
var requestVerbs = wordSet(
	"add", "answer", "append", "attach", "book", "bring", "buy", "calculate", "check",
	"compare", "compute", "convert", "copy", "count", "create", "describe", "draft",
	"edit", "email", "e-mail", "estimate", "evaluate", "explain", "fetch", "find",
	"forward", "get", "give", "go", "help", "list", "look", "mail", "make", "move",
	"open", "order", "pay", "plan", "post", "print", "put", "read", "remind", "rename",
	"reply", "reserve", "respond", "run", "save", "schedule", "search", "see", "send",
	"set", "share", "show", "sort", "store", "summarise", "summarize", "take", "tell",
	"translate", "update", "upload", "use", "view", "write",
)

var vocabulary = wordSet(append(slices.Collect(maps.Keys(requestVerbs)),
	"let", "keep", "want", "need", "know", "work",
	// asking
	"please", "kindly", "can", "could", "would", "will", "is", "are", "be", "do", "does",
	"'s", "it's", "there", "hello", "hi", "hey", "thanks", "thank",
	// determiners and pronouns
	"a", "an", "the", "this", "that", "these", "those", "my", "your", "our", "their",
	"his", "her", "its", "some", "any", "all", "each", "every", "both", "i", "me", "you",
	"it", "them", "him", "us", "we", "they", "myself", "one",
	// prepositions
	"to", "from", "in", "into", "on", "onto", "at", "for", "of", "with", "by", "as",
	"after", "before", "until", "via", "within", "near", "per", "through", "up",
	"according", "over",
	// conjunctions that join requests
	"and", "then", "also", "too", "now",
	// nouns of what the apps act on
	"email", "emails", "mail", "mails", "message", "messages", "inbox", "note", "notes",
	"file", "files", "folder", "folders", "directory", "workspace", "document",
	"documents", "doc", "docs", "drive", "page", "pages", "subject", "title", "body",
	"text", "content", "contents", "summary", "report", "reports", "draft", "reply",
	"list", "entry", "entries", "journal", "fare", "fares", "price", "prices", "ride",
	"rides", "trip", "trips", "booking", "flight", "hotel", "appointment",
	"appointments", "doctor", "calendar", "event", "events", "meeting", "meetings",
	"team", "reminder", "command", "commands", "shell", "output", "result", "results",
	"expression", "sum", "weather", "forecast", "time", "times", "zone", "timezone",
	"date", "dates", "day", "days", "week", "weeks", "month", "months", "year",
	"years", "hour", "hours", "minute", "minutes", "contact", "address", "link",
	"website", "site", "payment", "amount", "invoice", "bill", "number", "airport",
	"downtown", "city", "station", "home", "office", "place", "destination",
	"location", "here", "lunch", "dinner", "breakfast", "dentist", "harbour", "harbor",
	"port", "beach", "park", "centre", "center", "museum", "hospital", "school",
	"university", "restaurant", "café", "cafe", "shop", "store", "market",
	// words of what a request is about
	"what", "which", "have", "has", "quarterly", "monthly", "weekly", "daily",
	"latest", "new", "final", "recent", "same",
)...)

// questionOpeners are the words that open a question the hub reads as a
// request of the assistant ("What time is it in Tokyo?"), at the start of
// a sentence or of a clause within it.
var questionOpeners = wordSet("what", "what's", "whats", "when", "where", "which", "who", "how")

// askOpeners open a request put as a question: "can you …?", "could
// you please …?".
var askOpeners = wordSet("can", "could", "would", "will")

// contentMarkers are the words after which the rest of a sentence is the
// content of what is written, not a target ("with the subject …",
// "saying …", "titled …", "about …"); a colon is one too.
var contentMarkers = wordSet("saying", "say", "says", "containing", "contains", "titled",
	"named", "called", "about", "subject", "mentioning", "quoting", "reads")

// contentArgs are arguments whose value is the content itself: a value
// there in the content's role is its own.
var contentArgs = []string{"body", "subject", "text", "message", "content", "note", "title", "query", "memo", "description", "summary", "question", "prompt", "comment", "caption", "notes", "reason"}

// placePrepositions are the words after which a capitalised word is read
// as the name of a place or a person ("to Lisbon", "in Tokyo").
var placePrepositions = wordSet("to", "in", "from", "for", "at", "near", "via", "with", "of")

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// isContentArg reports whether arg takes the content's words as its
// value ("" is a role the caller does not know: the content's too).
func isContentArg(arg string) bool {
	return arg == "" || slices.Contains(contentArgs, strings.ToLower(arg))
}
