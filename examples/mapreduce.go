package examples

import (
	"context"
	"fmt"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// Channels of the map-reduce demo. Subject is shared with the summarize
// subgraph: a Send passes it in.
var (
	MRSubjects  = engine.LastValue[[]string]("subjects")
	MRSubject   = engine.LastValue[string]("subject")
	MRSummaries = engine.List[string]("summaries")
	MRReport    = engine.LastValue[string]("report")
	mrFacts     = engine.List[string]("facts")
)

// MapReduce builds the map-reduce demo: split sends each subject to the
// summarize subgraph (gather facts, then condense them), whose summaries a
// reducer collects, and combine joins them into the report.
func MapReduce(saver checkpoint.Saver) (Demo, error) {
	sub, err := engine.NewGraph("summarize", MRSubject, mrFacts, MRSummaries).
		AddNode("gather", func(_ context.Context, s engine.State) (engine.Output, error) {
			subj := MRSubject.Get(s)
			return engine.Updates(mrFacts.Add(subj+" is "+fmt.Sprint(len(subj))+" letters long", subj+" starts with "+strings.ToUpper(subj[:1]))), nil
		}).
		AddNode("condense", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(MRSummaries.Add(MRSubject.Get(s) + ": " + strings.Join(mrFacts.Get(s), "; "))), nil
		}).
		AddEdge(engine.START, "gather").AddEdge("gather", "condense").
		Compile()
	if err != nil {
		return Demo{}, err
	}
	b := engine.NewGraph("map-reduce", MRSubjects, MRSubject, MRSummaries, MRReport).
		AddNode("split", func(_ context.Context, s engine.State) (engine.Output, error) {
			if len(MRSubjects.Get(s)) == 0 {
				return nil, engine.Permanent(fmt.Errorf(`no subjects: start the thread with {"subjects": ["…"]}`))
			}
			return nil, nil
		}).
		AddSubgraph("summarize", sub).
		AddNode("combine", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(MRReport.Set(strings.Join(MRSummaries.Get(s), "\n"))), nil
		}).
		AddEdge(engine.START, "split").
		AddConditionalEdges("split", func(_ context.Context, s engine.State) (engine.Route, error) {
			var r engine.Route
			for _, subj := range MRSubjects.Get(s) {
				if subj == "" {
					continue
				}
				r.Sends = append(r.Sends, engine.Send{Node: "summarize", Arg: engine.Values{"subject": subj}})
			}
			return r, nil
		}, engine.SendsTo("summarize")).
		AddEdge("summarize", "combine").
		AddEdge("combine", engine.END)
	g, err := compileWith(b, saver)
	if err != nil {
		return Demo{}, err
	}
	return Demo{Graph: g, Description: "Map-reduce: Send fans subjects out to a summarize subgraph; a reducer collects the summaries.",
		Example: engine.Values{"subjects": []string{"otters", "kelp", "gulls"}}}, nil
}
