package mcp_test

import (
	"context"
	"log"
	"time"

	"github.com/weftstudio/weft/agent"
	"github.com/weftstudio/weft/model/openai"
	"github.com/weftstudio/weft/tool/mcp"
)

// A ReAct agent with the filesystem server's tools (run by npx, over
// stdio) and a search server's (over streamable HTTP); every write waits
// for a human.
func ExampleConnect() {
	ctx := context.Background()
	fs, err := mcp.Connect(ctx, mcp.Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/srv/notes"}},
		mcp.WithCallTimeout(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer fs.Close()
	search, err := mcp.Connect(ctx, mcp.Server{URL: "https://search.example.com/mcp", Header: map[string][]string{"Authorization": {"Bearer " + token}}},
		mcp.WithPrefix("search_"))
	if err != nil {
		log.Fatal(err)
	}
	defer search.Close()
	g, err := agent.New(openai.New(), append(fs.Tools(), search.Tools()...), agent.WithApproval("write_file", "edit_file"))
	if err != nil {
		log.Fatal(err)
	}
	_ = g // run it, or open it in the studio
}

var token = "…"
