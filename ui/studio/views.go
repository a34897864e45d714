package studio

import (
	"context"
	"fmt"

	"fyne.io/fyne/v2/dialog"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/lgview"
)

// useStore shows saver in the window. A LangGraph store's threads become
// view graphs, one per graph its threads ran (lgview), read in the
// background since grouping reads up to lgview.DefaultSample threads;
// any other store shows the program's own graphs.
func (s *Studio) useStore(saver checkpoint.Saver, name string) {
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
// and reports whether it did: a view of threads another program wrote.
func (s *Studio) refuseView() bool {
	g := s.m.graph().Graph
	if g == nil || !g.IsView() {
		return false
	}
	dialog.NewInformation("Read-only", g.ViewReadOnly(), s.win).Show()
	return true
}
