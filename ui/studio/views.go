package studio

import (
	"context"
	"fmt"
	"time"

	"fyne.io/fyne/v2/dialog"

	"github.com/weftstudio/weft/agentview"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/lgview"
)

// useStore shows saver in the window. A LangGraph store's threads become
// view graphs, one per graph its threads ran (lgview), read in the
// background since grouping reads up to lgview.DefaultSample threads;
// any other store shows the program's own graphs.
func (s *Studio) useStore(saver checkpoint.Saver, name string) {
	if s.stopLoad != nil {
		s.stopLoad() // a server still asked for its graphs is not waited for
		s.stopLoad = nil
		s.sb.setLoading(false)
	}
	if srv := agentview.ServerOf(saver); srv != nil {
		s.useServer(srv, saver, name)
		return
	}
	r, err := lgview.Reader(saver)
	if err != nil {
		s.m.update(func() {
			s.m.setStore(saver, name)
			s.m.setGraphs(s.cfg.Graphs)
		})
		s.sess.setViews(nil)
		s.watchStore()
		return
	}
	s.m.update(func() {
		s.m.setStore(saver, name)
		s.m.setGraphs(nil)
		s.m.setNote("grouping the LangGraph store's threads by the graph they ran…")
	})
	s.sb.setLoading(true)
	goBG(s.sess, func() (*lgview.Store, error) {
		return lgview.Open(context.Background(), r, lgview.Options{})
	}, func(v *lgview.Store, err error) {
		s.sb.setLoading(false)
		if err != nil {
			s.m.setNote("")
			s.showError("Reading the LangGraph store", err)
			return
		}
		if s.m.store != saver { // another store was opened meanwhile
			_ = v.Close()
			return
		}
		s.sess.setViews(v)
		var graphs []Graph
		for _, g := range v.Groups() {
			graphs = append(graphs, Graph{Graph: g.Graph, Description: fmt.Sprintf("%s, inferred from what they did", g.Inferred.Source)})
		}
		s.m.update(func() {
			s.m.setStore(v.Saver(), name)
			s.m.setGraphs(graphs)
			s.m.setNote("")
		})
		s.watchStore()
	})
}

// refuseView tells the user why the selected graph cannot run or write,
// and reports whether it did: a view of threads another program wrote
// that Weft cannot run (a LangGraph store).
func (s *Studio) refuseView() bool {
	g := s.m.graph().Graph
	if g == nil || !g.IsView() || g.ViewRuns() {
		return false
	}
	dialog.NewInformation("Read-only", g.ViewReadOnly(), s.win).Show()
	return true
}

// refuseEngineOnly is refuseView for what only Weft's own engine does
// (stepping into phases, what-if writes, answers left for workers): it
// refuses on every view, a LangGraph server's included, saying why.
func (s *Studio) refuseEngineOnly() bool {
	g := s.m.graph().Graph
	if g == nil || !g.IsView() {
		return false
	}
	title := "Read-only"
	if g.ViewRuns() {
		title = "Not on a LangGraph server"
	}
	dialog.NewInformation(title, g.ViewReadOnly(), s.win).Show()
	return true
}

// serverWait bounds the first questions to a server (its version, graphs
// and drawings): one that does not answer is reported, not waited on.
const serverWait = time.Minute

// useServer shows a LangGraph server: its graphs (one per assistant),
// asked for in the background, and its threads through saver.
func (s *Studio) useServer(srv *agentview.Server, saver checkpoint.Saver, name string) {
	s.sess.setViews(nil)
	s.m.update(func() {
		s.m.setStore(saver, name)
		s.m.setGraphs(nil)
		s.m.setNote("asking " + srv.Describe() + " for its graphs…")
	})
	s.sb.setLoading(true)
	ctx, cancel := context.WithTimeout(context.Background(), serverWait)
	s.stopLoad = cancel
	goBG(s.sess, func() (struct{}, error) {
		defer cancel()
		return struct{}{}, srv.Load(ctx)
	}, func(_ struct{}, err error) {
		if s.m.store != saver { // another store was opened meanwhile
			return
		}
		s.sb.setLoading(false)
		s.stopLoad = nil
		if err != nil {
			s.m.setNote("")
			s.showError("Connecting to the LangGraph server", err)
			return
		}
		s.m.update(func() {
			s.m.setGraphs(serverGraphs(srv))
			s.m.setNote("")
		})
		rememberServer(s.app.Preferences(), store.Redact(srv.Client().BaseURL())) // File → Connect offers it next time
		s.watchStore()
		// The input forms come later: a server may take long to give
		// its schemas, and the graphs are of use without them.
		goBG(s.sess, func() (struct{}, error) {
			srv.LoadInputs(context.Background())
			return struct{}{}, nil
		}, func(struct{}, error) {
			if s.m.store != saver {
				return
			}
			in := serverGraphs(srv)
			for i := range s.m.graphs {
				for _, g := range in {
					if g.Graph == s.m.graphs[i].Graph {
						s.m.graphs[i].Input = g.Input
					}
				}
			}
		})
	})
}

// serverGraphs is the graph list of a server's graphs.
func serverGraphs(srv *agentview.Server) []Graph {
	var graphs []Graph
	for _, g := range srv.Graphs() {
		desc := "served by " + srv.Describe()
		if d := g.Assistant.Description; d != nil && *d != "" {
			desc = *d + " (" + desc + ")"
		}
		var in []engine.ChannelInfo
		for _, f := range g.Input {
			t := f.Type
			if t == "" {
				t = "JSON"
			}
			in = append(in, engine.ChannelInfo{Name: f.Name, Type: t})
		}
		graphs = append(graphs, Graph{Graph: g.Graph, Description: desc, Input: in})
	}
	return graphs
}

// isView reports whether saver is another program's threads, shown
// through view graphs: a LangGraph store or a LangGraph server.
func isView(saver checkpoint.Saver) bool {
	if agentview.ServerOf(saver) != nil {
		return true
	}
	_, err := lgview.Reader(saver)
	return err == nil
}
