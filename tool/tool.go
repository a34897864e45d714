// Package tool makes tools a model can call from typed Go functions, and
// runs a model's tool calls in a graph: Node runs the calls of the last
// assistant message, Condition routes to it.
//
// A tool's JSON Schema is derived from its argument struct with
// github.com/invopop/jsonschema: field names from json tags, a field is
// required unless its tag says omitempty (or omitzero), nested structs are
// inlined, and jsonschema tags add descriptions, enums and bounds:
//
//	type Args struct {
//		City  string `json:"city" jsonschema:"description=City name"`
//		Units string `json:"units,omitempty" jsonschema:"enum=metric,enum=imperial"`
//	}
//
// Arguments a model sends are validated against that schema before the
// function runs; invalid ones (and errors the function returns) go back to
// the model as the tool's result, prefixed "Error:", so it can correct
// itself — they do not fail the node.
package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
)

// Tool is something a model can call.
type Tool interface {
	// Spec is what the model is told about the tool.
	Spec() model.ToolSpec
	// Call runs the tool with the model's arguments (a JSON object) and
	// returns what goes back to the model. An *ArgumentError means the
	// arguments were invalid and the tool did not run.
	Call(ctx context.Context, args string) (string, error)
}

// Attacher is a Tool whose results can carry attachments beside their
// text: images, audio, files (an MCP server's screenshot). Node calls
// CallAttached instead of Call and puts them on the tool message
// (engine.Message.Attachments), so the model sees them where its provider
// takes them (model.LiftAttachments); the text should name each one for
// the models and front ends that cannot. A nil slice is a text-only
// result.
type Attacher interface {
	Tool
	CallAttached(ctx context.Context, args string) (string, []engine.Attachment, error)
}

// Origin is a Tool that runs somewhere other than in the process, and
// says where for the call records (engine.CallRecord.Provider) the studio's
// Calls tab shows: an MCP server's tools say which server, and their name
// there ("mcp everything · echo").
type Origin interface {
	Origin() string
}

// ArgumentError reports arguments that do not fit a tool's schema.
type ArgumentError struct {
	Tool string
	Args string
	// Problems lists each violation, "at /path: what is wrong".
	Problems []string
}

// Error describes the ArgumentError.
func (e *ArgumentError) Error() string {
	return fmt.Sprintf("invalid arguments for tool %q: %s", e.Tool, strings.Join(e.Problems, "; "))
}

// Func is a tool running a Go function of typed arguments A and result R.
// A string result goes to the model as it is; other results as JSON.
type Func[A, R any] struct {
	spec   model.ToolSpec
	schema *Schema
	fn     func(context.Context, A) (R, error)
}

// New makes a tool named name from fn, with the JSON Schema of A (a struct)
// as its parameters. It fails when A is not a struct or its schema cannot
// be derived.
func New[A, R any](name, description string, fn func(ctx context.Context, args A) (R, error)) (*Func[A, R], error) {
	if name == "" {
		return nil, errors.New("tool: empty name")
	}
	if fn == nil {
		return nil, fmt.Errorf("tool %q: nil function", name)
	}
	t := reflect.TypeFor[A]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("tool %q: arguments must be a struct, got %s", name, t)
	}
	schema, err := schemaOf(t)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", name, err)
	}
	compiled, err := CompileSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: schema: %w", name, err)
	}
	return &Func[A, R]{spec: model.ToolSpec{Name: name, Description: description, Parameters: schema}, schema: compiled, fn: fn}, nil
}

// Must returns t, or panics with err: for tools defined at package level.
func Must[T Tool](t T, err error) T {
	if err != nil {
		panic(err)
	}
	return t
}

// Spec returns the tool's name, description and parameter schema.
func (f *Func[A, R]) Spec() model.ToolSpec { return f.spec }

// Decode validates args against the tool's schema and decodes them into an
// A, without running the function: for nodes that run a tool's calls
// themselves. Invalid arguments are an *ArgumentError.
func (f *Func[A, R]) Decode(args string) (A, error) {
	var a A
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	if _, err := f.schema.Check(f.spec.Name, args); err != nil {
		return a, err
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return a, &ArgumentError{Tool: f.spec.Name, Args: args, Problems: []string{err.Error()}}
	}
	return a, nil
}

// Call validates args, decodes them into an A and runs the function.
func (f *Func[A, R]) Call(ctx context.Context, args string) (string, error) {
	a, err := f.Decode(args)
	if err != nil {
		return "", err
	}
	r, err := f.fn(ctx, a)
	if err != nil {
		return "", err
	}
	if s, ok := any(r).(string); ok {
		return s, nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("tool %q: cannot encode its result: %w", f.spec.Name, err)
	}
	return string(b), nil
}

// SchemaFor returns the JSON Schema of T as tools derive theirs: for
// structured output (model.WithResponseFormat) of the same shapes.
func SchemaFor[T any]() (json.RawMessage, error) {
	return schemaOf(reflect.TypeFor[T]())
}

func schemaOf(t reflect.Type) (json.RawMessage, error) {
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, Anonymous: true}
	s := r.ReflectFromType(t)
	s.Version, s.ID = "", ""
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Schema checks a tool's arguments against a JSON Schema: the schema a Func
// derives from its argument type, or one a tool server gives.
type Schema struct{ s *validator.Schema }

// CompileSchema compiles a JSON Schema; one that names no "$schema" is read
// as draft 2020-12 (what MCP specifies, and what Func derives).
func CompileSchema(schema json.RawMessage) (*Schema, error) {
	doc, err := validator.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := validator.NewCompiler()
	c.DefaultDraft(validator.Draft2020)
	if err := c.AddResource("tool.json", doc); err != nil {
		return nil, err
	}
	compiled, err := c.Compile("tool.json")
	if err != nil {
		return nil, err
	}
	return &Schema{compiled}, nil
}

// Check validates args, the JSON text of a call to the tool named name
// ("" or blanks stand for {}), and returns it decoded. Arguments that are
// not JSON or break the schema are an *ArgumentError listing each leaf
// problem as "at /path: message".
func (s *Schema) Check(name, args string) (any, error) {
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	inst, err := validator.UnmarshalJSON(strings.NewReader(args))
	if err != nil {
		return nil, &ArgumentError{Tool: name, Args: args, Problems: []string{"not JSON: " + err.Error()}}
	}
	if err := s.s.Validate(inst); err != nil {
		return nil, &ArgumentError{Tool: name, Args: args, Problems: problems(err)}
	}
	return inst, nil
}

// problems lists a validation error's leaf causes, "at /path: message".
func problems(err error) []string {
	var ve *validator.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var out []string
	var walk func(u *validator.OutputUnit)
	walk = func(u *validator.OutputUnit) {
		if len(u.Errors) == 0 && u.Error != nil {
			loc := u.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			out = append(out, "at "+loc+": "+u.Error.String())
		}
		for i := range u.Errors {
			walk(&u.Errors[i])
		}
	}
	walk(ve.DetailedOutput())
	if len(out) == 0 {
		return []string{strings.ReplaceAll(err.Error(), "\n", " ")}
	}
	return out
}
