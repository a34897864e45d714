package studio

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint"
)

// recentServersKey is the user's preference holding the LangGraph
// servers the studio showed, newest first.
const recentServersKey = "servers.recent"

// maxRecentServers is how many servers File → Connect remembers.
const maxRecentServers = 8

// defaultServer is what File → Connect offers before any server was
// shown: the address `langgraph dev` serves on.
const defaultServer = "http://127.0.0.1:2024"

// recentServers are the servers the user's studio showed, newest first.
func recentServers(p fyne.Preferences) []string {
	return p.StringListWithFallback(recentServersKey, nil)
}

// rememberServer puts addr first among the user's recent servers.
func rememberServer(p fyne.Preferences, addr string) {
	list := slices.DeleteFunc(recentServers(p), func(s string) bool { return s == addr })
	list = append([]string{addr}, list...)
	if len(list) > maxRecentServers {
		list = list[:maxRecentServers]
	}
	p.SetStringList(recentServersKey, list)
}

// connectDialog is File → Connect to server…: a LangGraph server's address,
// offered from the servers this user's studio showed before (the last one
// filled in), and an API key for a deployment that needs one. The key is
// used for this connection only and never stored: set LANGGRAPH_API_KEY
// (or LANGSMITH_API_KEY) to not type it.
func (s *Studio) connectDialog() {
	if s.cfg.OpenServer == nil {
		return
	}
	recent := recentServers(s.app.Preferences())
	addr := widget.NewSelectEntry(recent)
	addr.SetPlaceHolder(defaultServer)
	if len(recent) > 0 {
		addr.SetText(recent[0])
	} else {
		addr.SetText(defaultServer)
	}
	addr.Validator = serverAddress
	key := widget.NewPasswordEntry()
	key.SetPlaceHolder("only for a deployment that asks for one")
	items := []*widget.FormItem{
		{Text: "Server", Widget: addr, HintText: "langgraph dev or a deployment; the servers you connected to before are in the list"},
		{Text: "API key", Widget: key, HintText: "kept for this connection only: set LANGGRAPH_API_KEY to not type it"},
	}
	d := dialog.NewForm("Connect to a LangGraph server", "Connect", "Cancel", items, func(ok bool) {
		if ok {
			s.openServer(strings.TrimSpace(addr.Text), key.Text)
		}
	}, s.win)
	d.Resize(fyne.NewSize(620, 260))
	showDialog(d, addr, key)
	s.win.Canvas().Focus(addr)
}

// serverAddress is nil for an http:// or https:// address with a host,
// else says what is wrong: File → Connect takes no file or database.
func serverAddress(text string) error {
	a := strings.TrimSpace(text)
	u, err := url.Parse(a)
	switch {
	case a == "":
		return errors.New("the address of a LangGraph server, e.g. " + defaultServer)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https"):
		return fmt.Errorf("not an http:// or https:// address: File → Open store… opens files and databases")
	case u.Host == "":
		return fmt.Errorf("no host in %q", a)
	}
	return nil
}

// openServer shows the LangGraph server at addr (Config.OpenServer).
func (s *Studio) openServer(addr, apiKey string) {
	s.openWith(addr, func() (checkpoint.Saver, string, error) { return s.cfg.OpenServer(addr, apiKey) })
}
