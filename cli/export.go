// Moving a thread between stores: the export and import commands.

package cli

import (
	"context"
	"flag"
	"io"
	"os"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/bundle"
	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/engine"
)

func cmdExport(ctx context.Context, s checkpoint.Saver, _ []*engine.Graph, args []string, w io.Writer) error {
	thread, out, err := exportArgs(args)
	if err != nil {
		return err
	}
	var opts []bundle.ExportOption
	if _, ok := s.(*langgraph.Reader); ok {
		opts = append(opts, bundle.WholeListing()) // it reads the whole thread at each List
	}
	return exportTo(ctx, s, thread, out, w, opts...)
}

// exportArgs reads export's arguments: the thread, and the file for -o
// ("" for standard output).
func exportArgs(args []string) (thread, out string, err error) {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	o := fs.String("o", "", "write to this file instead of standard output")
	pos, err := parse(fs, args)
	if err != nil {
		return "", "", err
	}
	if len(pos) != 1 {
		return "", "", usagef("usage: export THREAD [-o FILE]")
	}
	return pos[0], *o, nil
}

// exportTo writes thread's bundle to the file out, or to w when out is "".
func exportTo(ctx context.Context, s checkpoint.Saver, thread, out string, w io.Writer, opts ...bundle.ExportOption) error {
	if out == "" {
		return bundle.Export(ctx, s, thread, w, opts...)
	}
	// Write beside the target and rename, so a failed export never leaves a
	// half-written file under the name asked for.
	tmp, err := os.CreateTemp(dirOf(out), ".weft-export-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := bundle.Export(ctx, s, thread, tmp, opts...); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return err
	}
	return printJSON(w, map[string]string{"thread_id": thread, "file": out})
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[:i+1]
		}
	}
	return "."
}

func cmdImport(ctx context.Context, s checkpoint.Saver, _ []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	as := fs.String("as", "", "store the thread under this id")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: import FILE [-as THREAD]")
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return err
	}
	defer f.Close()
	id, err := bundle.Import(ctx, s, f, bundle.Rename(*as))
	if err != nil {
		return err
	}
	return printJSON(w, map[string]string{"thread_id": id})
}
