package langgraph

import (
	"fmt"
	"strings"
)

// TaskPath writes a LangGraph task path (a task's "path" in get_state's
// tasks) as Weft writes its own: ("__pregel_pull", "a") is "pull:a",
// ("__pregel_push", 0) "push:0". The store's readers and the server's
// client both show paths this way, so one thread reads the same from
// either.
func TaskPath(p []any) string {
	parts := make([]string, len(p))
	for i, x := range p {
		parts[i] = strings.TrimPrefix(fmt.Sprint(x), "__pregel_")
	}
	return strings.Join(parts, ":")
}

// ErrorText is a task's error as LangGraph stores or serves it, as one
// string: a string, or an object {"message", "name"?} ("name: message").
// Anything else is printed as it is.
func ErrorText(e any) string {
	switch v := e.(type) {
	case string:
		return v
	case map[string]any:
		if m, ok := v["message"].(string); ok {
			if n, ok := v["name"].(string); ok && n != "" {
				return n + ": " + m
			}
			return m
		}
	}
	return fmt.Sprint(e)
}
