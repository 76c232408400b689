package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// check runs the command on a history given as JSON text and returns its exit status and output.
func check(t *testing.T, history string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	status := run(args, strings.NewReader(history), &stdout, &stderr)
	return status, stdout.String(), stderr.String()
}

func expectStatus(t *testing.T, history string, want int, args ...string) string {
	t.Helper()
	status, stdout, stderr := check(t, history, args...)
	if status != want {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", status, want, stdout, stderr)
	}
	return stdout + stderr
}

// op builds one operation's JSON; ret < 0 stands for an unknown outcome (return null).
func op(client int, key, kind, value, expect, output string, call, ret int64) string {
	retText := "null"
	if ret >= 0 {
		retText = fmt.Sprint(ret)
	}
	return fmt.Sprintf(`{"client": %d, "key": %q, "op": %q, "value": %s, "expect": %s, "output": %s, "call": %d, "return": %s}`,
		client, key, kind, value, expect, output, call, retText)
}

func history(ops ...string) string { return "[\n" + strings.Join(ops, ",\n") + "\n]" }

const (
	null   = "null"
	okOut  = `{"ok": true}`
	failed = `{"ok": false}`
)

func read(v string) string { return fmt.Sprintf(`{"ok": true, "value": %s}`, v) }

func TestConcurrentRegisterHistoryIsLinearizable(t *testing.T) {
	h := history(
		// Two overlapping puts, then reads that agree on an order ("b" last).
		op(0, "k", "put", `"a"`, null, okOut, 0, 100),
		op(1, "k", "put", `"b"`, null, okOut, 50, 150),
		op(2, "k", "get", null, null, read(`"a"`), 60, 70), // between the two puts' effects
		op(2, "k", "get", null, null, read(`"b"`), 160, 170),
		op(0, "k", "cas", `"c"`, `"b"`, okOut, 200, 300),
		op(1, "k", "cas", `"d"`, `"b"`, failed, 210, 310), // lost the race
		op(2, "k", "get", null, null, read(`"c"`), 320, 330),
		op(0, "k", "delete", null, null, okOut, 400, 410),
		op(1, "k", "delete", null, null, okOut, 405, 415), // deleting a missing key succeeds
		op(2, "k", "get", null, null, read(null), 420, 430),
		op(0, "k", "cas", `"e"`, `"c"`, failed, 440, 450), // cas on an absent object fails
		op(1, "k", "put_if_absent", `"f"`, null, okOut, 460, 480),
		op(2, "k", "put_if_absent", `"g"`, null, failed, 470, 490),
		op(0, "k", "delete", null, `"x"`, failed, 500, 510), // conditional delete, wrong value
		op(0, "k", "delete", null, `"f"`, okOut, 520, 530),
		// Another key, independent of the first.
		op(3, "other", "get", null, null, read(null), 0, 1000),
		op(4, "other", "put", `"z"`, null, okOut, 10, 20),
	)
	out := expectStatus(t, h, exitLinearizable)
	if !strings.Contains(out, "linearizable: 17 operations") {
		t.Errorf("unexpected summary:\n%s", out)
	}
}

func TestStaleReadIsNotLinearizable(t *testing.T) {
	h := history(
		op(0, "k", "put", `"a"`, null, okOut, 0, 10),
		op(1, "k", "put", `"b"`, null, okOut, 20, 30),
		op(2, "k", "get", null, null, read(`"a"`), 40, 50), // "a" was overwritten before the get began
		op(3, "fine", "put", `"x"`, null, okOut, 0, 10),
	)
	out := expectStatus(t, h, exitNotLinearizable)
	for _, want := range []string{`NOT LINEARIZABLE: key "k"`, `get("k") -> "a"`, "history[2]", "1 of 2 keys failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `key "fine"`) {
		t.Errorf("report names a key that is fine:\n%s", out)
	}
}

func TestTwoWinnersOfPutIfAbsentIsNotLinearizable(t *testing.T) {
	h := history(
		op(0, "lock", "put_if_absent", `"x"`, null, okOut, 0, 100),
		op(1, "lock", "put_if_absent", `"y"`, null, okOut, 5, 90),
	)
	out := expectStatus(t, h, exitNotLinearizable)
	if !strings.Contains(out, `put_if_absent("lock", "y") -> ok`) && !strings.Contains(out, `put_if_absent("lock", "x") -> ok`) {
		t.Errorf("report lacks the operations:\n%s", out)
	}
}

func TestCasAgainstAnOverwrittenValueIsNotLinearizable(t *testing.T) {
	expectStatus(t, history(
		op(0, "k", "put", `"a"`, null, okOut, 0, 10),
		op(1, "k", "put", `"b"`, null, okOut, 20, 30),
		op(2, "k", "cas", `"c"`, `"a"`, okOut, 40, 50),
	), exitNotLinearizable)
	expectStatus(t, history( // a 412 while the expected value was there
		op(0, "k", "put", `"a"`, null, okOut, 0, 10),
		op(2, "k", "cas", `"c"`, `"a"`, failed, 40, 50),
	), exitNotLinearizable)
}

func TestUnknownOutcomeIsAcceptedEitherWay(t *testing.T) {
	took := history(
		op(0, "k", "put", `"a"`, null, okOut, 0, 10),
		op(1, "k", "put", `"b"`, null, null, 20, -1), // timed out
		op(2, "k", "get", null, null, read(`"b"`), 1000, 1010),
	)
	expectStatus(t, took, exitLinearizable)
	didNot := history(
		op(0, "k", "put", `"a"`, null, okOut, 0, 10),
		op(1, "k", "put", `"b"`, null, null, 20, -1),
		op(2, "k", "get", null, null, read(`"a"`), 1000, 1010),
	)
	expectStatus(t, didNot, exitLinearizable)
	late := history( // took effect long after the client gave up on it
		op(0, "k", "put", `"a"`, null, okOut, 0, 10),
		op(1, "k", "put", `"b"`, null, null, 20, -1),
		op(2, "k", "get", null, null, read(`"a"`), 1000, 1010),
		op(2, "k", "get", null, null, read(`"b"`), 2000, 2010),
	)
	expectStatus(t, late, exitLinearizable)
	conditional := history(
		op(1, "k", "put_if_absent", `"b"`, null, null, 20, -1),
		op(2, "k", "put_if_absent", `"c"`, null, failed, 30, 40),
		op(2, "k", "get", null, null, read(`"b"`), 50, 60),
	)
	expectStatus(t, conditional, exitLinearizable)

	// Once seen, it has taken effect: it cannot be undone without another write.
	undone := history(
		op(0, "k", "put", `"a"`, null, okOut, 0, 10),
		op(1, "k", "put", `"b"`, null, null, 20, -1),
		op(2, "k", "get", null, null, read(`"b"`), 1000, 1010),
		op(2, "k", "get", null, null, read(`"a"`), 2000, 2010),
	)
	out := expectStatus(t, undone, exitNotLinearizable)
	if !strings.Contains(out, `put("k", "b") -> unknown`) {
		t.Errorf("report lacks the unknown put:\n%s", out)
	}
}

func TestTableAppends(t *testing.T) {
	good := history(
		op(0, "db.t", "append", `"1"`, null, okOut, 0, 100),
		op(1, "db.t", "append", `"2"`, null, okOut, 10, 90),
		op(2, "db.t", "append", `"3"`, null, failed, 20, 30), // a refused commit changes nothing
		op(3, "db.t", "load", null, null, read(`"2"`), 40, 50),
		op(3, "db.t", "load", null, null, read(`"2,1"`), 200, 210),
		op(1, "db.t", "append", `"4"`, null, null, 300, -1),
		op(3, "db.t", "load", null, null, read(`"2, 1, 4"`), 400, 410),
		op(3, "db.u", "load", null, null, read(null), 0, 10), // no snapshot yet
	)
	expectStatus(t, good, exitLinearizable)
	lost := history( // an acknowledged append missing from a later load
		op(0, "db.t", "append", `"1"`, null, okOut, 0, 10),
		op(1, "db.t", "append", `"2"`, null, okOut, 20, 30),
		op(3, "db.t", "load", null, null, read(`"2"`), 40, 50),
	)
	out := expectStatus(t, lost, exitNotLinearizable)
	if !strings.Contains(out, `load("db.t") -> [2]`) || !strings.Contains(out, "=> [1,2]") {
		t.Errorf("unexpected report:\n%s", out)
	}
	reordered := history(
		op(0, "db.t", "append", `"1"`, null, okOut, 0, 10),
		op(1, "db.t", "append", `"2"`, null, okOut, 20, 30),
		op(3, "db.t", "load", null, null, read(`"2,1"`), 40, 50),
	)
	expectStatus(t, reordered, exitNotLinearizable)
}

func TestMalformedHistories(t *testing.T) {
	cases := map[string]string{
		``:               "empty input",
		`{"a": 1}`:       "expected a JSON list",
		`[{"client": 0,`: "not valid JSON",
		`[1]`:            "history[0]: an operation must be a JSON object",
		`[{"client": 0, "key": "k", "op": "put", "value": "a", "output": {"ok": true}, "call": 0}]`:                           `field "return" is missing`,
		`[{"client": 0, "key": "k", "op": "pur", "value": "a", "output": {"ok": true}, "call": 0, "return": 1}]`:              `unknown operation "pur"`,
		`[{"client": 0, "key": "k", "op": "put", "value": null, "output": {"ok": true}, "call": 0, "return": 1}]`:             `put: field "value": must be a string, got null`,
		`[{"client": 0, "key": "k", "op": "cas", "value": "a", "output": {"ok": true}, "call": 0, "return": 1}]`:              `cas: field "expect"`,
		`[{"client": 0, "key": "k", "op": "put", "value": "a", "output": {"ok": true}, "call": 5, "return": 1}]`:              `field "return": 1 is before the call`,
		`[{"client": 0, "key": "k", "op": "put", "value": "a", "output": {"ok": true}, "call": 1.5, "return": 2}]`:            `field "call": must be an integer`,
		`[{"client": 0, "key": "k", "op": "get", "output": {"ok": true}, "call": 0, "return": 1}]`:                            `field "value" is missing`,
		`[{"client": 0, "key": "k", "op": "get", "call": 0, "return": 1}]`:                                                    `field "output": missing`,
		`[{"client": 0, "key": "k", "op": "cas", "value": "a", "expect": "b", "output": {}, "call": 0, "return": 1}]`:         `field "ok" is missing`,
		`[{"client": 0, "key": "k", "op": "put", "value": "a", "output": {"ok": false}, "call": 0, "return": 1}]`:             "cannot fail",
		`[{"client": 0, "key": "k", "op": "put", "value": "a", "etag": "x", "output": {"ok": true}, "call": 0, "return": 1}]`: `unknown field "etag"`,
		`[{"client": -1, "key": "k", "op": "put", "value": "a", "output": {"ok": true}, "call": 0, "return": 1}]`:             `field "client"`,
		`[{"client": 0, "key": "t", "op": "append", "value": "1,2", "output": {"ok": true}, "call": 0, "return": 1}]`:         "no comma",
		`[{"client": 0, "key": "t", "op": "append", "value": "1", "output": {"ok": true}, "call": 0, "return": 1},
		  {"client": 0, "key": "t", "op": "get", "output": {"value": null}, "call": 2, "return": 3}]`: "either a table or an object",
	}
	for input, want := range cases {
		out := expectStatus(t, input, exitMalformed)
		if !strings.Contains(out, want) {
			t.Errorf("for %s\nthe message lacks %q:\n%s", input, want, out)
		}
	}
}

func TestTimeoutGivesUnknown(t *testing.T) {
	// Forty puts all concurrent and a read of a value none wrote: proving that no order fits means
	// trying every subset of the puts, far more than a few milliseconds allow.
	var ops []string
	for i := 0; i < 40; i++ {
		ops = append(ops, op(i, "k", "put", fmt.Sprintf(`"v%d"`, i), null, okOut, int64(i), 1000))
	}
	ops = append(ops, op(40, "k", "get", null, null, read(`"never"`), 0, 1000))
	out := expectStatus(t, history(ops...), exitTimedOut, "--timeout", "200ms")
	if !strings.Contains(out, "unknown: timed out") || !strings.Contains(out, `undecided within the timeout: "k"`) {
		t.Errorf("unexpected output:\n%s", out)
	}
}

func TestFileArgumentAndVisualization(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.json")
	h := history(
		op(0, "k", "put", `"a"`, null, okOut, 0, 10),
		op(1, "k", "get", null, null, read(`"b"`), 20, 30),
	)
	if err := os.WriteFile(path, []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(dir, "out.html")
	expectStatus(t, "", exitNotLinearizable, path, "--visualize", html) // flags after the path too
	data, err := os.ReadFile(html)
	if err != nil {
		t.Fatalf("no visualization: %v", err)
	}
	if !bytes.Contains(data, []byte("<html")) || !bytes.Contains(data, []byte(`get(\"k\") -\u003e \"b\"`)) {
		t.Errorf("the visualization lacks the history (%d bytes)", len(data))
	}
	expectStatus(t, "", exitMalformed, filepath.Join(dir, "missing.json"))
	expectStatus(t, "", exitMalformed, "--timeout", "soon", path)
	expectStatus(t, "", exitMalformed, path, path)
}
