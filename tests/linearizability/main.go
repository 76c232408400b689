// Command serac-lincheck checks a recorded history of concurrent operations for linearizability
// with Porcupine: objects as registers (put, get, delete, put_if_absent, cas) and Iceberg tables as
// ordered lists of appended snapshots (append, load), each key checked on its own. README.md
// describes the history format and the exit codes.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

const (
	exitLinearizable    = 0
	exitNotLinearizable = 1
	exitMalformed       = 2
	exitTimedOut        = 3
)

// How many operations a failure report lists per part before eliding the rest.
const reportOpsMax = 12

type opKind int

const (
	opPut opKind = iota
	opGet
	opDelete
	opCas
	opPutIfAbsent
	opAppend
	opLoad
)

var opKinds = map[string]opKind{
	"put": opPut, "get": opGet, "delete": opDelete, "cas": opCas, "put_if_absent": opPutIfAbsent,
	"append": opAppend, "load": opLoad,
}

func (k opKind) String() string {
	for name, kind := range opKinds {
		if kind == k {
			return name
		}
	}
	return "invalid"
}

func (k opKind) onTable() bool { return k == opAppend || k == opLoad }

// input is an operation's invocation: Porcupine's Operation.Input.
type input struct {
	kind      opKind
	key       string
	value     string // put, cas, put_if_absent: the value written; append: the snapshot id
	expect    string // cas and a conditional delete: the value the object must hold
	hasExpect bool
}

// output is an operation's response: Porcupine's Operation.Output.
type output struct {
	unknown bool   // no response (timeout, connection error): the model accepts any outcome
	ok      bool   // writes: false when the precondition failed (412) or the commit was refused
	present bool   // get: the value read is not null
	value   string // get: the value read; load: the snapshot ids, comma-separated
}

// state is one key's state. A register is absent or holds value; a table (table set once any
// table operation has stepped) holds its snapshot ids in value, comma-separated, in order.
type state struct {
	table   bool
	present bool
	value   string
}

func step(st, in, out interface{}) (bool, interface{}) {
	s, i, o := st.(state), in.(input), out.(output)
	switch i.kind {
	case opPut:
		return o.unknown || o.ok, state{present: true, value: i.value}
	case opGet:
		return o.unknown || (o.present == s.present && o.value == s.value), s
	case opDelete:
		if !i.hasExpect {
			return o.unknown || o.ok, state{}
		}
		return conditional(s, o, s.present && s.value == i.expect, state{})
	case opPutIfAbsent:
		return conditional(s, o, !s.present, state{present: true, value: i.value})
	case opCas:
		return conditional(s, o, s.present && s.value == i.expect, state{present: true, value: i.value})
	case opAppend:
		s.table = true
		if o.unknown || o.ok {
			if s.value != "" {
				s.value += ","
			}
			s.value += i.value
		}
		return true, s
	case opLoad:
		s.table = true
		return o.unknown || o.value == s.value, s
	}
	return false, s
}

// conditional steps a write that takes effect exactly when its precondition holds and reports ok
// exactly then. One whose outcome is unknown is taken to have run at its linearization point (had
// it not run at all, it can be linearized last, where nothing observes it).
func conditional(s state, o output, holds bool, next state) (bool, interface{}) {
	switch {
	case o.unknown:
		if holds {
			return true, next
		}
		return true, s
	case o.ok:
		return holds, next
	default:
		return !holds, s
	}
}

func hashState(st interface{}) uint64 {
	s := st.(state)
	h := fnv.New64a()
	h.Write([]byte(s.value))
	sum := h.Sum64()
	if s.present {
		sum ^= 1
	}
	if s.table {
		sum ^= 2
	}
	return sum
}

// short quotes a value for a report, eliding the middle of a long one.
func short(v string) string {
	const max = 40
	r := []rune(v)
	if len(r) > max {
		v = string(r[:max-12]) + "…" + string(r[len(r)-11:])
	}
	return strconv.Quote(v)
}

func describeState(st interface{}) string {
	s := st.(state)
	switch {
	case s.table:
		return "[" + s.value + "]"
	case s.present:
		return short(s.value)
	default:
		return "absent"
	}
}

func describeOperation(in, out interface{}) string {
	i, o := in.(input), out.(output)
	var call string
	switch i.kind {
	case opPut, opPutIfAbsent, opAppend:
		call = fmt.Sprintf("%s(%s, %s)", i.kind, short(i.key), short(i.value))
	case opCas:
		call = fmt.Sprintf("cas(%s, %s => %s)", short(i.key), short(i.expect), short(i.value))
	case opDelete:
		if i.hasExpect {
			call = fmt.Sprintf("delete(%s, if %s)", short(i.key), short(i.expect))
		} else {
			call = fmt.Sprintf("delete(%s)", short(i.key))
		}
	default:
		call = fmt.Sprintf("%s(%s)", i.kind, short(i.key))
	}
	var result string
	switch {
	case o.unknown:
		result = "unknown"
	case i.kind == opGet && o.present:
		result = short(o.value)
	case i.kind == opGet:
		result = "null"
	case i.kind == opLoad:
		result = "[" + o.value + "]"
	case o.ok:
		result = "ok"
	default:
		result = "failed"
	}
	return call + " -> " + result
}

func describeMetadata(m interface{}) string {
	if m == nil {
		return ""
	}
	return fmt.Sprintf("history[%d]", m.(int))
}

// partitionByKey splits a history into one history per key, keys in sorted order.
func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[string][]porcupine.Operation{}
	for _, op := range history {
		k := op.Input.(input).key
		byKey[k] = append(byKey[k], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([][]porcupine.Operation, len(keys))
	for i, k := range keys {
		parts[i] = byKey[k]
	}
	return parts
}

// The model checks one key's history; modelByKey partitions a whole history first.
var model = porcupine.Model{
	Init:                      func() interface{} { return state{} },
	Step:                      step,
	Hash:                      hashState,
	DescribeOperation:         describeOperation,
	DescribeState:             describeState,
	DescribeOperationMetadata: describeMetadata,
}

var modelByKey = func() porcupine.Model {
	m := model
	m.Partition = partitionByKey
	return m
}()

// ---- reading a history ----

type malformedError struct{ msg string }

func (e *malformedError) Error() string { return e.msg }

func malformed(format string, args ...interface{}) error {
	return &malformedError{fmt.Sprintf(format, args...)}
}

var fieldsAllowed = map[string]bool{
	"client": true, "key": true, "op": true, "value": true, "expect": true, "output": true,
	"call": true, "return": true,
}

func isNull(raw json.RawMessage) bool {
	return raw == nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func jsonKind(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func decodeString(raw json.RawMessage) (string, error) {
	var s string
	if isNull(raw) || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("must be a string, got %s", jsonKind(raw))
	}
	return s, nil
}

func decodeInt(raw json.RawMessage) (int64, error) {
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil || isNull(raw) {
		if jsonKind(raw) == "a number" {
			return 0, fmt.Errorf("must be an integer in the int64 range, got %s", bytes.TrimSpace(raw))
		}
		return 0, fmt.Errorf("must be an integer, got %s", jsonKind(raw))
	}
	return n, nil
}

func decodeBool(raw json.RawMessage) (bool, error) {
	var b bool
	if isNull(raw) || json.Unmarshal(raw, &b) != nil {
		return false, fmt.Errorf("must be true or false, got %s", jsonKind(raw))
	}
	return b, nil
}

// lineCol turns a byte offset into a line and column, for JSON syntax errors.
func lineCol(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, col + 1
}

// parseHistory reads a JSON history into Porcupine operations, with each operation's index in the
// history as its metadata.
func parseHistory(data []byte) ([]porcupine.Operation, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, malformed("empty input: expected a JSON list of operations")
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			line, col := lineCol(data, syntax.Offset)
			return nil, malformed("not valid JSON: %v (line %d, column %d)", syntax, line, col)
		}
		return nil, malformed("expected a JSON list of operations, got %s", jsonKind(data))
	}
	ops := make([]porcupine.Operation, 0, len(raws))
	kindOfKey := map[string]int{} // key -> index of the first operation on it
	for index, raw := range raws {
		op, err := parseOperation(raw)
		if err != nil {
			return nil, malformed("history[%d]: %v", index, err)
		}
		in := op.Input.(input)
		if first, seen := kindOfKey[in.key]; !seen {
			kindOfKey[in.key] = index
		} else if firstIn := ops[first].Input.(input); firstIn.kind.onTable() != in.kind.onTable() {
			return nil, malformed("history[%d]: key %s: %s is %s, but history[%d] on the same key is %s, %s: "+
				"a key is either a table or an object", index, short(in.key), in.kind, kindClass(in.kind), first,
				firstIn.kind, kindClass(firstIn.kind))
		}
		op.Metadata = index
		ops = append(ops, op)
	}
	return ops, nil
}

func kindClass(k opKind) string {
	if k.onTable() {
		return "a table operation"
	}
	return "an object operation"
}

func parseOperation(raw json.RawMessage) (porcupine.Operation, error) {
	var op porcupine.Operation
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || isNull(raw) {
		return op, fmt.Errorf("an operation must be a JSON object, got %s", jsonKind(raw))
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !fieldsAllowed[name] {
			return op, fmt.Errorf("unknown field %q (fields: client, key, op, value, expect, output, call, return)", name)
		}
	}
	for _, name := range []string{"client", "key", "op", "call", "return"} {
		if _, ok := fields[name]; !ok {
			return op, fmt.Errorf("field %q is missing", name)
		}
	}

	opName, err := decodeString(fields["op"])
	if err != nil {
		return op, fmt.Errorf("field \"op\": %v", err)
	}
	kind, ok := opKinds[opName]
	if !ok {
		return op, fmt.Errorf("field \"op\": unknown operation %q (put, get, delete, cas, put_if_absent, append, load)", opName)
	}
	fail := func(field string, err error) error { return fmt.Errorf("%s: field %q: %v", opName, field, err) }

	client, err := decodeInt(fields["client"])
	if err != nil {
		return op, fail("client", err)
	}
	if client < 0 || client > math.MaxInt32 {
		return op, fail("client", fmt.Errorf("must be a small non-negative integer, got %d", client))
	}
	in := input{kind: kind}
	if in.key, err = decodeString(fields["key"]); err != nil {
		return op, fail("key", err)
	}

	switch kind {
	case opPut, opCas, opPutIfAbsent, opAppend:
		if in.value, err = decodeString(fields["value"]); err != nil {
			return op, fail("value", fmt.Errorf("%v (the value written)", err))
		}
		if kind == opAppend && (in.value == "" || strings.Contains(in.value, ",") || strings.TrimSpace(in.value) != in.value) {
			return op, fail("value", fmt.Errorf("a snapshot id must be non-empty, with no comma and no surrounding space, got %q", in.value))
		}
	default:
		if !isNull(fields["value"]) {
			return op, fail("value", fmt.Errorf("must be null or absent for %s (the value read goes in output.value)", opName))
		}
	}
	switch kind {
	case opCas:
		if in.expect, err = decodeString(fields["expect"]); err != nil {
			return op, fail("expect", fmt.Errorf("%v (the value the object must hold)", err))
		}
		in.hasExpect = true
	case opDelete:
		if !isNull(fields["expect"]) {
			if in.expect, err = decodeString(fields["expect"]); err != nil {
				return op, fail("expect", err)
			}
			in.hasExpect = true
		}
	default:
		if !isNull(fields["expect"]) {
			return op, fail("expect", fmt.Errorf("only cas and delete take a precondition"))
		}
	}

	call, err := decodeInt(fields["call"])
	if err != nil {
		return op, fail("call", err)
	}
	var ret int64 = math.MaxInt64 // unknown outcome: may take effect at any time after the call
	var out output
	if isNull(fields["return"]) {
		out.unknown = true // output, if given, is ignored
	} else {
		if ret, err = decodeInt(fields["return"]); err != nil {
			return op, fail("return", fmt.Errorf("%v, or null when the outcome is unknown", err))
		}
		if ret < call {
			return op, fail("return", fmt.Errorf("%d is before the call, %d", ret, call))
		}
		if out, err = parseOutput(kind, in, fields["output"]); err != nil {
			return op, fmt.Errorf("%s: field \"output\": %v", opName, err)
		}
	}
	op.ClientId = int(client)
	op.Input = in
	op.Call = call
	op.Return = ret
	op.Output = out
	return op, nil
}

func parseOutput(kind opKind, in input, raw json.RawMessage) (output, error) {
	var out output
	var fields map[string]json.RawMessage
	if isNull(raw) {
		return out, fmt.Errorf("missing: an operation that returned needs its output (return null for an unknown outcome)")
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return out, fmt.Errorf("must be an object {\"ok\": bool, \"value\": string|null}, got %s", jsonKind(raw))
	}
	for name := range fields {
		if name != "ok" && name != "value" {
			return out, fmt.Errorf("unknown field %q (fields: ok, value)", name)
		}
	}
	out.ok = true
	okRaw, hasOk := fields["ok"]
	if hasOk {
		var err error
		if out.ok, err = decodeBool(okRaw); err != nil {
			return out, fmt.Errorf("field \"ok\": %v", err)
		}
	}
	valueRaw, hasValue := fields["value"]
	switch kind {
	case opGet, opLoad:
		if !out.ok {
			return out, fmt.Errorf("ok is false: a %s that failed observed nothing; record it with return null", kind)
		}
		if !hasValue {
			return out, fmt.Errorf("field \"value\" is missing: the %s's result (null for %s)", kind,
				map[bool]string{true: "an empty table", false: "not found"}[kind == opLoad])
		}
		if !isNull(valueRaw) {
			v, err := decodeString(valueRaw)
			if err != nil {
				return out, fmt.Errorf("field \"value\": %v", err)
			}
			out.present, out.value = true, v
		}
		if kind == opLoad {
			ids := strings.Split(out.value, ",")
			for i := range ids {
				ids[i] = strings.TrimSpace(ids[i])
				if ids[i] == "" && out.value != "" {
					return out, fmt.Errorf("field \"value\": an empty snapshot id in %q", out.value)
				}
			}
			out.value = strings.Join(ids, ",")
			out.present = false
		}
	default:
		if hasValue && !isNull(valueRaw) {
			return out, fmt.Errorf("field \"value\": only get and load return a value")
		}
		conditional := kind == opCas || kind == opPutIfAbsent || kind == opAppend || in.hasExpect
		if !hasOk && conditional {
			return out, fmt.Errorf("field \"ok\" is missing: did the %s take effect?", kind)
		}
		if !out.ok && !conditional {
			return out, fmt.Errorf("ok is false, but an unconditional %s cannot fail: record an error response "+
				"with return null (unknown outcome)", kind)
		}
	}
	return out, nil
}

// ---- checking ----

type keyResult struct {
	key    string
	ops    []porcupine.Operation
	result porcupine.CheckResult
	info   porcupine.LinearizationInfo
}

// checkKeys checks each key's history on its own, a few at a time, all within one deadline.
func checkKeys(ops []porcupine.Operation, timeout time.Duration) []keyResult {
	parts := partitionByKey(ops)
	results := make([]keyResult, len(parts))
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := &results[i]
				r.ops = parts[i]
				r.key = parts[i][0].Input.(input).key
				remaining := time.Duration(0)
				if timeout > 0 {
					if remaining = time.Until(deadline); remaining <= 0 {
						r.result = porcupine.Unknown
						continue
					}
				}
				r.result, r.info = porcupine.CheckOperationsVerbose(model, r.ops, remaining)
			}
		}()
	}
	for i := range parts {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// longestPartial picks the longest partial linearization Porcupine found (ties: the first by ids).
func longestPartial(info porcupine.LinearizationInfo) []porcupine.Operation {
	all := info.PartialLinearizationsOperations()
	if len(all) == 0 {
		return nil
	}
	var best []porcupine.Operation
	for _, p := range all[0] {
		if len(p) > len(best) || (len(p) == len(best) && lessByIndex(p, best)) {
			best = p
		}
	}
	return best
}

func lessByIndex(a, b []porcupine.Operation) bool {
	for i := range a {
		if a[i].Metadata.(int) != b[i].Metadata.(int) {
			return a[i].Metadata.(int) < b[i].Metadata.(int)
		}
	}
	return false
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func describeTimes(op porcupine.Operation, origin int64) string {
	end := "?"
	if op.Return != math.MaxInt64 {
		end = time.Duration(op.Return - origin).String()
	}
	return fmt.Sprintf("[%s, %s]", time.Duration(op.Call-origin), end)
}

func describeLine(op porcupine.Operation, origin int64) string {
	return fmt.Sprintf("%-13s client %-3d %-24s %s", describeMetadata(op.Metadata), op.ClientId,
		describeTimes(op, origin), describeOperation(op.Input, op.Output))
}

func report(w io.Writer, r keyResult, origin int64) {
	table := r.ops[0].Input.(input).kind.onTable()
	what := "an object (a register: absent or one value)"
	if table {
		what = "a table (the ordered list of appended snapshot ids)"
	}
	clients := map[int]bool{}
	for _, op := range r.ops {
		clients[op.ClientId] = true
	}
	fmt.Fprintf(w, "NOT LINEARIZABLE: key %s, %s: its %s by %s fit no sequential order\n",
		short(r.key), what, plural(len(r.ops), "operation"), plural(len(clients), "client"))

	prefix := longestPartial(r.info)
	fmt.Fprintf(w, "  longest linearizable prefix found (%d of %d operations), each with the state after it:\n",
		len(prefix), len(r.ops))
	s := model.Init()
	for i, op := range prefix {
		_, s = step(s, op.Input, op.Output)
		if len(prefix)-i > reportOpsMax {
			if len(prefix)-i == reportOpsMax+1 {
				fmt.Fprintf(w, "    ... %d earlier operations\n", len(prefix)-reportOpsMax)
			}
			continue
		}
		fmt.Fprintf(w, "    %s  => %s\n", describeLine(op, origin), describeState(s))
	}
	if len(prefix) == 0 {
		fmt.Fprintf(w, "    (none: no operation can come first; the initial state is %s)\n", describeState(s))
	}

	inPrefix := map[int]bool{}
	for _, op := range prefix {
		inPrefix[op.Metadata.(int)] = true
	}
	var rest []porcupine.Operation
	for _, op := range r.ops {
		if !inPrefix[op.Metadata.(int)] {
			rest = append(rest, op)
		}
	}
	sort.SliceStable(rest, func(i, j int) bool { return rest[i].Call < rest[j].Call })
	if len(rest) == 1 {
		fmt.Fprintf(w, "  the other one, which cannot come next:\n")
	} else {
		fmt.Fprintf(w, "  the other %d, none of which can come next, by call time:\n", len(rest))
	}
	for i, op := range rest {
		if i == reportOpsMax {
			fmt.Fprintf(w, "    ... %d more\n", len(rest)-reportOpsMax)
			break
		}
		fmt.Fprintf(w, "    %s\n", describeLine(op, origin))
	}
}

func visualize(path string, ops []porcupine.Operation, timeout time.Duration) error {
	_, info := porcupine.CheckOperationsVerbose(modelByKey, ops, timeout)
	return porcupine.VisualizePath(modelByKey, info, path)
}

// ---- command line ----

const usage = `usage: serac-lincheck [--timeout 30s] [--visualize FILE] [HISTORY.json]

Checks a JSON history of operations (from HISTORY.json, or standard input when it is
absent or "-") for linearizability, each key on its own (tests/linearizability/README.md).
Exit status: 0 linearizable, 1 not linearizable, 2 malformed input or usage, 3 unknown
(the check timed out).
`

// parseArgs accepts flags before and after the history's path.
func parseArgs(args []string, stderr io.Writer) (path string, timeout time.Duration, vis string, err error) {
	fs := flag.NewFlagSet("serac-lincheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	fs.DurationVar(&timeout, "timeout", 30*time.Second, "give up (exit 3) after this long; 0 for no limit")
	fs.StringVar(&vis, "visualize", "", "write Porcupine's HTML visualization to this file")
	var positional []string
	for {
		if err = fs.Parse(args); err != nil {
			return
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) > 1 {
		err = fmt.Errorf("one history at a time, got %d paths", len(positional))
	} else if timeout < 0 {
		err = fmt.Errorf("--timeout must not be negative")
	} else if len(positional) == 1 {
		path = positional[0]
	}
	return
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	path, timeout, vis, err := parseArgs(args, stderr)
	if err == flag.ErrHelp {
		return exitLinearizable
	} else if err != nil {
		fmt.Fprintf(stderr, "serac-lincheck: %v\n%s", err, usage)
		return exitMalformed
	}
	var data []byte
	source := "standard input"
	if path == "" || path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		source = path
		data, err = os.ReadFile(path)
	}
	if err != nil {
		fmt.Fprintf(stderr, "serac-lincheck: cannot read the history: %v\n", err)
		return exitMalformed
	}
	ops, err := parseHistory(data)
	if err != nil {
		fmt.Fprintf(stderr, "serac-lincheck: malformed history in %s: %v\n", source, err)
		return exitMalformed
	}

	results := checkKeys(ops, timeout)
	origin := int64(math.MaxInt64)
	unknownOutcomes := 0
	for _, op := range ops {
		if op.Call < origin {
			origin = op.Call
		}
		if op.Output.(output).unknown {
			unknownOutcomes++
		}
	}
	var illegal, undecided []keyResult
	for _, r := range results {
		switch r.result {
		case porcupine.Illegal:
			illegal = append(illegal, r)
		case porcupine.Unknown:
			undecided = append(undecided, r)
		}
	}
	summary := fmt.Sprintf("%d operations (%d of unknown outcome) on %d keys", len(ops), unknownOutcomes, len(results))

	status := exitLinearizable
	switch {
	case len(illegal) > 0:
		status = exitNotLinearizable
		for _, r := range illegal {
			report(stdout, r, origin)
		}
		fmt.Fprintf(stdout, "not linearizable: %d of %d keys failed; %s (times from the first call)\n",
			len(illegal), len(results), summary)
	case len(undecided) > 0:
		status = exitTimedOut
		fmt.Fprintf(stdout, "unknown: timed out after %v; %s\n", timeout, summary)
	default:
		fmt.Fprintf(stdout, "linearizable: %s\n", summary)
	}
	if len(undecided) > 0 {
		keys := make([]string, 0, len(undecided))
		for i, r := range undecided {
			if i == reportOpsMax {
				keys = append(keys, fmt.Sprintf("... %d more", len(undecided)-reportOpsMax))
				break
			}
			keys = append(keys, short(r.key))
		}
		fmt.Fprintf(stdout, "undecided within the timeout: %s\n", strings.Join(keys, ", "))
	}

	if vis != "" {
		// The failed keys alone when any failed, else the whole history.
		shown := ops
		if len(illegal) > 0 {
			shown = nil
			for _, r := range illegal {
				shown = append(shown, r.ops...)
			}
		}
		if err := visualize(vis, shown, timeout); err != nil {
			fmt.Fprintf(stderr, "serac-lincheck: cannot write the visualization: %v\n", err)
		} else {
			fmt.Fprintf(stdout, "visualization: %s\n", vis)
		}
	}
	return status
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
