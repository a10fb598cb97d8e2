//go:build cgo

package fakegpu

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// ErrBadScenario is wrapped by every error ParseScenario and LoadScenario
// return for a scenario they cannot use.
var ErrBadScenario = errors.New("fakegpu: bad scenario")

// ScenarioError is a problem with one value of a scenario. It matches
// ErrBadScenario with errors.Is.
type ScenarioError struct {
	// File is the scenario file, if it came from LoadScenario.
	File string
	// Path is the key path of the bad value, e.g.
	// "gpus[0].processes[1].type"; empty for the document as a whole.
	Path string
	// Problem says what is wrong, e.g. `want "C", "G", "C+G" or "M+C", got "X"`.
	Problem string
}

// Error returns "fakegpu: bad scenario [file]: path: problem".
func (e *ScenarioError) Error() string {
	var b strings.Builder
	b.WriteString(ErrBadScenario.Error())
	if e.File != "" {
		b.WriteString(" " + e.File)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Problem)
	return b.String()
}

// Is makes errors.Is(err, ErrBadScenario) true.
func (e *ScenarioError) Is(target error) bool { return target == ErrBadScenario }

func bad(path, format string, args ...any) error {
	return &ScenarioError{Path: path, Problem: fmt.Sprintf(format, args...)}
}

func keyPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func indexPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// decodeDocument decodes data as exactly one JSON value in which no
// object repeats a key.
func decodeDocument(data []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if err == io.EOF {
			return nil, bad("", "empty document")
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, bad("", "invalid JSON at byte %d: %v", se.Offset, err)
		}
		return nil, bad("", "invalid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("", "unexpected data after the top-level object")
	}
	if err := checkDuplicateKeys(raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// jsonLevel is an object or array that checkDuplicateKeys is inside.
type jsonLevel struct {
	path     string          // key path of the object or array
	keys     map[string]bool // an object's keys so far; nil for an array
	wantKey  bool            // an object's next token is a key or its end
	key      string          // the key of an object's current member
	elements int             // an array's elements so far
}

// memberPath returns the key path of the value now starting in l.
func (l *jsonLevel) memberPath() string {
	if l.keys != nil {
		return keyPath(l.path, l.key)
	}
	return indexPath(l.path, l.elements)
}

// valueDone records that the value starting in l has ended.
func (l *jsonLevel) valueDone() {
	if l.keys != nil {
		l.wantKey = true
	} else {
		l.elements++
	}
}

// checkDuplicateKeys returns a *ScenarioError naming the first key that
// an object of the JSON value raw repeats, at any depth. encoding/json
// would silently keep the last one, so a scenario could say one thing and
// do another. Keys are compared after unescaping, so "a" and "\u0061"
// are the same key.
func checkDuplicateKeys(raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers are not converted, so none is out of range
	var stack []*jsonLevel
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return bad("", "invalid JSON: %v", err)
		}
		var top *jsonLevel
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if key, ok := tok.(string); ok && top != nil && top.wantKey {
			if top.keys[key] {
				return bad(keyPath(top.path, key), "duplicate key")
			}
			top.keys[key], top.key, top.wantKey = true, key, false
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			level := &jsonLevel{}
			if top != nil {
				level.path = top.memberPath()
			}
			if tok == json.Delim('{') {
				level.keys, level.wantKey = make(map[string]bool), true
			}
			stack = append(stack, level)
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				continue
			}
			top = stack[len(stack)-1]
		}
		if top != nil {
			top.valueDone()
		}
	}
}

// jsonKind names the kind of a JSON value by its first byte.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// jsonKeys returns the keys a struct type's json tags declare.
func jsonKeys(t reflect.Type) map[string]bool {
	keys := make(map[string]bool)
	for i := 0; i < t.NumField(); i++ {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); tag != "" && tag != "-" {
			keys[tag] = true
		}
	}
	return keys
}

// decodeObject decodes the JSON object raw at path into the struct *dst.
// Keys must match dst's json tags exactly: an unknown key, or a value of
// the wrong type, is an error naming its path.
func decodeObject(raw json.RawMessage, path string, dst any) error {
	if k := jsonKind(raw); k != "an object" {
		return bad(path, "want an object, got %s", k)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return bad(path, "%v", err)
	}
	allowed := jsonKeys(reflect.TypeOf(dst).Elem())
	var unknown []string
	for k := range members {
		if !allowed[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return bad(keyPath(path, unknown[0]), "unknown key")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return bad(keyPath(path, te.Field), "want %s, got %s", describeType(te.Type), te.Value)
		}
		return bad(path, "%v", err)
	}
	return nil
}

// describeType says in words what a JSON value of Go type t must be.
func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return fmt.Sprintf("a whole number 0..%d", uint64(math.MaxUint64)>>(64-t.Bits()))
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		return "an integer"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// decodeArray splits the JSON array raw at path into its elements.
func decodeArray(raw json.RawMessage, path string) ([]json.RawMessage, error) {
	if k := jsonKind(raw); k != "an array" {
		return nil, bad(path, "want an array, got %s", k)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, bad(path, "%v", err)
	}
	return elems, nil
}

// decodeString decodes the JSON string raw at path.
func decodeString(raw json.RawMessage, path string) (string, error) {
	if k := jsonKind(raw); k != "a string" {
		return "", bad(path, "want a string, got %s", k)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", bad(path, "%v", err)
	}
	return s, nil
}

// decodeStrings decodes a JSON array of strings at path.
func decodeStrings(raw json.RawMessage, path string) ([]string, error) {
	elems, err := decodeArray(raw, path)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if out[i], err = decodeString(e, indexPath(path, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodeStringMap decodes a JSON object of strings at path, keys sorted.
func decodeStringMap(raw json.RawMessage, path string) (keys []string, values map[string]string, err error) {
	if k := jsonKind(raw); k != "an object" {
		return nil, nil, bad(path, "want an object, got %s", k)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, nil, bad(path, "%v", err)
	}
	values = make(map[string]string, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if values[k], err = decodeString(members[k], keyPath(path, k)); err != nil {
			return nil, nil, err
		}
	}
	return keys, values, nil
}
