package llm

import "time"

// SetPingAnswerForTest sets how long ping waits for an answer once
// connected, and returns the function that restores it.
func SetPingAnswerForTest(d time.Duration) func() {
	old := pingAnswer
	pingAnswer = d
	return func() { pingAnswer = old }
}
