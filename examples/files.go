package examples

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/weftstudio/weft/agent"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/model/scripted"
	"github.com/weftstudio/weft/tool/mcp"
)

// Variables that add the files agent to the demos (FilesFromEnv).
const (
	// FilesEnv names the folder the files agent works in. A folder that
	// does not exist is made, with two sample files in it; an existing
	// one is used as it is.
	FilesEnv = "WEFT_DEMO_FILES"
	// FilesServerEnv is the command that runs the filesystem MCP server,
	// split at spaces; the folder is its last argument. Unset, it is
	// DefaultFilesServer.
	FilesServerEnv = "WEFT_DEMO_FILES_SERVER"
)

// DefaultFilesServer runs the reference filesystem server from npm.
const DefaultFilesServer = "npx -y @modelcontextprotocol/server-filesystem"

// filesTools are the filesystem server's tools the scripted model calls;
// the files agent's writes wait for a human's approval.
var (
	filesTools  = []string{"list_allowed_directories", "list_directory", "read_text_file", "read_media_file", "write_file"}
	filesWrites = []string{"write_file", "edit_file", "move_file", "create_directory"}
)

// FilesServer is the filesystem MCP server of $FilesServerEnv (or
// DefaultFilesServer) on dir.
func FilesServer(dir string) mcp.Server {
	f := strings.Fields(os.Getenv(FilesServerEnv))
	if len(f) == 0 {
		f = strings.Fields(DefaultFilesServer)
	}
	return mcp.Server{Name: "files", Command: f[0], Args: append(f[1:], dir)}
}

// AllFromEnv is All with the options the environment asks for too
// (FilesFromEnv): what the weft commands open.
func AllFromEnv(saver checkpoint.Saver, opts ...Option) ([]Demo, error) {
	files, err := FilesFromEnv()
	if err != nil {
		return nil, err
	}
	return All(saver, append(opts, files...)...)
}

// FilesFromEnv returns the option that adds the files agent when
// $FilesEnv names a folder, making it (with SeedFiles) when it does not
// exist; nil options when $FilesEnv is unset.
func FilesFromEnv() ([]Option, error) {
	dir := os.Getenv(FilesEnv)
	if dir == "" {
		return nil, nil
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", FilesEnv, err)
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if err := SeedFiles(dir); err != nil {
			return nil, fmt.Errorf("%s: %w", FilesEnv, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", FilesEnv, err)
	}
	// The server compares resolved paths: give it the folder it will see.
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return nil, fmt.Errorf("%s: %w", FilesEnv, err)
	}
	return []Option{WithFiles(FilesServer(dir))}, nil
}

// SeedFiles makes dir with the files agent's two sample files: a to-do
// list and a small chart (a PNG the agent reads as an image).
func SeedFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	todo := "# To do\n\n- check the tide tables\n- pack the field notebook\n"
	if err := os.WriteFile(filepath.Join(dir, "todo.md"), []byte(todo), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tides.png"), tideChart(), 0o644)
}

// tideChart draws a bar chart of a day's tides, 240×120.
func tideChart() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 240, 120))
	for y := range 120 {
		for x := range 240 {
			img.Set(x, y, color.RGBA{0xf4, 0xf1, 0xea, 0xff})
		}
	}
	heights := []int{30, 62, 95, 70, 38, 24, 58, 90, 74, 40}
	for i, h := range heights {
		for x := 12 + i*22; x < 12+i*22+16; x++ {
			for y := 110 - h; y < 110; y++ {
				img.Set(x, y, color.RGBA{0x1f, 0x5f, 0x8b, 0xff})
			}
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img) // an in-memory RGBA image always encodes
	return b.Bytes()
}

// Files builds the files agent: a ReAct agent (agent.New) on the tools of
// the filesystem MCP server c is connected to, with m as its model (nil:
// ScriptedFilesModel). Writes wait for a human's approval.
func Files(saver checkpoint.Saver, c *mcp.Client, m model.ChatModel) (Demo, error) {
	tools := c.Tools()
	have := map[string]bool{}
	for _, t := range tools {
		have[t.Spec().Name] = true
	}
	if m == nil {
		var missing []string
		for _, n := range filesTools {
			if !have[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			return Demo{}, fmt.Errorf("files agent: its scripted model calls the filesystem server's tools, and this server lacks %s", strings.Join(missing, ", "))
		}
		m = ScriptedFilesModel(demoPace())
	}
	var approve []string
	for _, n := range filesWrites {
		if have[n] {
			approve = append(approve, n)
		}
	}
	opts := []agent.Option{agent.WithName("files agent"), agent.WithApproval(approve...), agent.WithSystemPrompt(filesPrompt)}
	if saver != nil {
		opts = append(opts, agent.WithCompileOptions(engine.WithSaver(saver)))
	}
	g, err := agent.New(m, tools, opts...)
	if err != nil {
		return Demo{}, err
	}
	return Demo{Graph: g, Description: "An agent on a real MCP server's tools (the filesystem server): it reads a folder's notes and chart, and a write waits for approval.",
		Example: engine.Values{"messages": []engine.Message{{ID: "u1", Role: engine.RoleUser, Content: "Read my to-do list, look at the tide chart, and add: buy bait"}}},
		Close:   c.Close}, nil
}

const filesPrompt = "You work in the user's folder through the filesystem tools. Find the folder with list_allowed_directories, " +
	"read what the user asks about, and change files only when asked; every write is approved by a human first."

// ScriptedFilesModel is the files agent's offline model, streaming at
// pace tokens a second. It finds the folder, lists it, reads its first
// text file and its first image together, appends the line the user asks
// for ("add: …") with write_file, and then says what it did.
func ScriptedFilesModel(pace float64) model.ChatModel {
	return scripted.New(scriptedFiles, scripted.WithPace(pace), scripted.WithModelName("scripted-file-clerk"))
}

var addLine = regexp.MustCompile(`(?i)\badd:\s*(.+)$`)

func scriptedFiles(req *model.Request) (scripted.Turn, error) {
	msgs := req.Messages
	var ask string
	for _, m := range msgs {
		if m.Role == engine.RoleUser {
			ask = m.Content // the last request: the one being answered
		}
	}
	last := msgs[len(msgs)-1]
	n := len(msgs)
	call := func(name string, args map[string]any) engine.ToolCall {
		if args == nil {
			args = map[string]any{}
		}
		b, _ := json.Marshal(args)
		return engine.ToolCall{ID: fmt.Sprintf("call-%d-%s", n, name), Name: name, Args: string(b)}
	}
	// The results of the turn's calls, by tool.
	results := map[string]engine.Message{}
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role != engine.RoleAssistant; i-- {
		if msgs[i].Role == engine.RoleTool {
			results[msgs[i].Name] = msgs[i]
		}
	}
	failed := func(r engine.Message) bool { return strings.HasPrefix(r.Content, "Error: ") }
	switch {
	case last.Role == engine.RoleUser:
		return scripted.Turn{Text: "Let me find your folder.", Calls: []engine.ToolCall{call("list_allowed_directories", nil)}}, nil
	case results["list_allowed_directories"].Content != "":
		r := results["list_allowed_directories"]
		lines := strings.Split(strings.TrimSpace(r.Content), "\n")
		if failed(r) || len(lines) < 2 {
			return scripted.Turn{Text: "I could not find a folder to work in: " + r.Content}, nil
		}
		return scripted.Turn{Calls: []engine.ToolCall{call("list_directory", map[string]any{"path": lines[1]})}}, nil
	case results["list_directory"].Content != "":
		r := results["list_directory"]
		if failed(r) {
			return scripted.Turn{Text: "I could not list the folder: " + r.Content}, nil
		}
		dir := folderOf(msgs)
		var calls []engine.ToolCall
		var text, img string
		for l := range strings.SplitSeq(r.Content, "\n") {
			name, ok := strings.CutPrefix(l, "[FILE] ")
			if !ok {
				continue
			}
			switch strings.ToLower(filepath.Ext(name)) {
			case ".md", ".txt":
				if text == "" {
					text = name
					calls = append(calls, call("read_text_file", map[string]any{"path": filepath.Join(dir, name)}))
				}
			case ".png", ".jpg", ".jpeg", ".gif", ".webp":
				if img == "" {
					img = name
					calls = append(calls, call("read_media_file", map[string]any{"path": filepath.Join(dir, name)}))
				}
			}
		}
		if len(calls) == 0 {
			return scripted.Turn{Text: "The folder has no notes or pictures: " + oneLine(r.Content)}, nil
		}
		return scripted.Turn{Text: "Reading " + strings.Join(nonEmpty(text, img), " and ") + ".", Calls: calls}, nil
	case results["read_text_file"].Content != "" || results["read_media_file"].Content != "":
		r := results["read_text_file"]
		seen := ""
		if img := results["read_media_file"]; len(img.Attachments) > 0 {
			seen = fmt.Sprintf(" I see the chart (%s, %d bytes).", img.Attachments[0].MIMEType, len(img.Attachments[0].Data))
		}
		m := addLine.FindStringSubmatch(ask)
		if r.Content == "" || failed(r) || m == nil {
			return scripted.Turn{Text: "Your notes: " + oneLine(r.Content) + "." + seen}, nil
		}
		path := argOf(msgs, r.ToolCallID, "path")
		content := strings.TrimRight(r.Content, "\n") + "\n- " + strings.TrimSpace(m[1]) + "\n"
		return scripted.Turn{Text: "Adding it to " + filepath.Base(path) + "." + seen,
			Calls: []engine.ToolCall{call("write_file", map[string]any{"path": path, "content": content})}}, nil
	case results["write_file"].Content != "":
		return scripted.Turn{Text: "Done: " + oneLine(results["write_file"].Content)}, nil
	}
	return scripted.Turn{Text: "I have nothing more to do."}, nil
}

// folderOf is the folder list_allowed_directories named in msgs.
func folderOf(msgs []engine.Message) string {
	for _, m := range msgs {
		if m.Role == engine.RoleTool && m.Name == "list_allowed_directories" {
			if lines := strings.Split(strings.TrimSpace(m.Content), "\n"); len(lines) > 1 {
				return lines[1]
			}
		}
	}
	return ""
}

// argOf is the argument key of the call id in msgs.
func argOf(msgs []engine.Message, id, key string) string {
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.ID == id {
				var args map[string]any
				_ = json.Unmarshal([]byte(c.Args), &args)
				s, _ := args[key].(string)
				return s
			}
		}
	}
	return ""
}

func oneLine(s string) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) > 160 {
		return string(r[:160]) + "…"
	}
	return string(r)
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// connectFiles connects to the files agent's server.
func connectFiles(srv mcp.Server) (*mcp.Client, error) {
	c, err := mcp.Connect(context.Background(), srv)
	if err != nil {
		return nil, fmt.Errorf("files agent (%s): %w", FilesEnv, err)
	}
	return c, nil
}
