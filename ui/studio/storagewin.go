package studio

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// storageConsole is the storage window (File → Storage…): where the
// store's bytes go — the file, what its rows hold (checkpoint headers,
// channel values, pending writes), free pages, how it grew, the largest
// threads and values; a thread's bytes by channel, by checkpoint and its
// growth per step — and giving them back: prune (keep the newest N, or
// only what is newer than a date; one thread or all), delete a thread,
// vacuum with a progress bar and the bytes reclaimed. Everything that
// reads or writes the store runs in the background: the window never
// blocks, and an operation can be cancelled.
//
// Like every panel it shows the model: what it read of the store and the
// thread selected there live in the model's storage part, which the window
// observes; another store opened in the studio is the console's too.
type storageConsole struct {
	win       fyne.Window
	m         *model
	unsub     func() // stops observing the model, once the window closes
	sess      *session
	onChanged func() // the store lost rows: the studio reads it again
	keys      keyFunc

	title   *widget.Label
	reading *widget.Label    // says the store is being read
	cards   [5]*widget.Label // file, data, free, threads, checkpoints
	mix     *stackBar
	mixText [3]*widget.Label // the legend of mix, with the sizes
	growth  *sparkline
	growthT *widget.Label
	threads *keyList
	detail  *widget.Label
	tGrowth *sparkline
	tGrowT  *widget.Label
	tabs    *container.AppTabs
	chans   *keyList
	chansNo *widget.Label // the Channels tab when it has nothing to list
	values  *keyList
	cps     *keyList
	deepB   *widget.Button

	keep     *widget.Entry
	older    *widget.DateEntry
	scope    *widget.RadioGroup
	pruneB   *widget.Button
	deleteB  *widget.Button
	vacuumB  *widget.Button
	full     *widget.Check
	progress *widget.ProgressBar
	status   *widget.Label
	cancelB  *widget.Button

	quiet  bool // the list's selection is being set to match the model's
	cancel context.CancelFunc
}

// storageTop is how many of the largest threads and values the console lists.
const storageTop = 100

// openStorage opens the storage window on the studio's store, or brings
// the open one forward.
func (s *Studio) openStorage() {
	if c := s.storage; c != nil {
		c.win.RequestFocus()
		return
	}
	c := newStorageConsole(s.app, s.m, s.sess, s.refresh, s.windowKey)
	c.win.SetOnClosed(func() {
		if c.cancel != nil {
			c.cancel()
		}
		c.unsub()
		if s.storage == c {
			s.storage = nil
		}
	})
	s.storage = c
	c.win.Show()
	c.load()
}

func newStorageConsole(a fyne.App, m *model, sess *session, onChanged func(), keys keyFunc) *storageConsole {
	c := &storageConsole{m: m, sess: sess, onChanged: onChanged, keys: keys}
	c.win = a.NewWindow("Storage · " + m.storeName)
	c.title = widget.NewLabelWithStyle("Storage of "+m.storeName, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	c.reading = mutedLabel("")
	cardNames := []string{"File", "In rows", "Free", "Threads", "Checkpoints"}
	var cardObjs []fyne.CanvasObject
	for i, n := range cardNames {
		v := widget.NewLabelWithStyle("…", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		v.SizeName = theme.SizeNameSubHeadingText
		c.cards[i] = v
		cardObjs = append(cardObjs, container.NewVBox(mutedLabel(n), v))
	}
	c.mix = newStackBar(theme.ColorNamePrimary, theme.ColorNameWarning, theme.ColorNameSuccess)
	legend := container.NewHBox()
	for i := range c.mixText {
		sw := canvas.NewRectangle(theme.Color(c.mix.colors[i]))
		sw.SetMinSize(fyne.NewSize(12, 12))
		sw.CornerRadius = 2
		c.mixText[i] = widget.NewLabel("")
		c.mixText[i].SizeName = theme.SizeNameCaptionText
		legend.Add(container.NewCenter(sw))
		legend.Add(c.mixText[i])
	}
	c.growth = newSparkline(40)
	c.growthT = mutedLabel("")
	refresh := widget.NewButtonWithIcon("Refresh", theme.ViewRefreshIcon(), c.load)
	refresh.Importance = widget.LowImportance
	c.deepB = widget.NewButton("By channel, whole store", c.loadDeep)
	c.deepB.Importance = widget.LowImportance
	head := container.NewVBox(
		container.NewBorder(nil, nil, container.NewHBox(c.title, c.reading), container.NewHBox(c.deepB, refresh)),
		container.NewGridWithColumns(5, cardObjs...),
		c.mix, legend,
		container.NewBorder(nil, c.growthT, nil, nil, c.growth),
		widget.NewSeparator(),
	)

	c.threads = newKeyList(keys, func() int { return c.threadCount() },
		func() fyne.CanvasObject {
			id := widget.NewLabel("thread")
			id.Truncation = fyne.TextTruncateEllipsis
			size := widget.NewLabel("size")
			size.TextStyle.Monospace = true
			sub := widget.NewLabel("")
			sub.SizeName = theme.SizeNameCaptionText
			sub.Importance = widget.LowImportance
			return container.New(&tightVBox{}, container.NewBorder(nil, nil, nil, size, id), sub, newFracBar())
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if c.m.storage.sum == nil || i >= len(c.m.storage.sum.LargestThreads) {
				return
			}
			t := c.m.storage.sum.LargestThreads[i]
			box := o.(*fyne.Container)
			top := box.Objects[0].(*fyne.Container)
			top.Objects[0].(*widget.Label).SetText(t.ThreadID)
			top.Objects[1].(*widget.Label).SetText(byteSize64(t.Bytes.Total()))
			box.Objects[1].(*widget.Label).SetText(fmt.Sprintf("%s · values %s · writes %s", plural(int(t.Checkpoints), "checkpoint"), byteSize64(t.Bytes.Values), byteSize64(t.Bytes.Writes)))
			most := c.m.storage.sum.LargestThreads[0].Bytes.Total()
			if most > 0 {
				box.Objects[2].(*fracBar).set(float64(t.Bytes.Total()) / float64(most))
			}
		})
	c.threads.OnSelected = func(i widget.ListItemID) {
		if !c.quiet && c.m.storage.sum != nil && i < len(c.m.storage.sum.LargestThreads) {
			c.selectThread(c.m.storage.sum.LargestThreads[i].ThreadID)
		}
	}
	left := container.NewBorder(widget.NewLabelWithStyle("Threads, largest first", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, nil, nil, c.threads)

	c.detail = widget.NewLabel("Select a thread to see its bytes by channel, by checkpoint and by step. Until then the tabs show the whole store.")
	c.detail.Wrapping = fyne.TextWrapWord
	c.tGrowth = newSparkline(36)
	c.tGrowT = mutedLabel("")
	c.chans = newKeyList(keys, func() int { return len(m.storage.channels()) }, sizeRow,
		func(i widget.ListItemID, o fyne.CanvasObject) {
			rows := m.storage.channels()
			if i >= len(rows) {
				return
			}
			ch := rows[i]
			setSizeRow(o, ch.Channel, byteSize64(ch.Total()),
				fmt.Sprintf("%s, %s · %s, %s", plural(int(ch.Values), "value"), byteSize64(ch.ValueBytes), plural(int(ch.Writes), "write"), byteSize64(ch.WriteBytes)),
				frac(ch.Total(), rows[0].Total()))
		})
	c.values = newKeyList(keys, func() int { return len(c.valueRows()) }, sizeRow,
		func(i widget.ListItemID, o fyne.CanvasObject) {
			rows := c.valueRows()
			if i >= len(rows) {
				return
			}
			v := rows[i]
			where := "thread " + v.ThreadID
			if v.NS != "" {
				where += " · " + nsLabel(v.NS)
			}
			setSizeRow(o, v.Channel, byteSize64(v.Bytes), fmt.Sprintf("%s · version %d (step %d)", where, v.Version, engine.VersionStep(v.Version)), frac(v.Bytes, rows[0].Bytes))
		})
	c.cps = newKeyList(keys, func() int { return c.cpCount() }, sizeRow,
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if c.m.storage.ts == nil || i >= len(c.m.storage.ts.Newest) {
				return
			}
			cp := c.m.storage.ts.Newest[i]
			name := fmt.Sprintf("step %d · %s", cp.Step, shortID(cp.Ref.CheckpointID))
			if cp.Ref.NS != "" {
				name += " · " + nsLabel(cp.Ref.NS)
			}
			most := int64(0)
			for _, x := range c.m.storage.ts.Newest {
				most = max(most, x.Bytes.Total())
			}
			setSizeRow(o, name, byteSize64(cp.Bytes.Total()),
				fmt.Sprintf("%s · header %s · %s new, %s · %s, %s", clock(cp.TS), byteSize64(cp.Bytes.Headers), plural(int(cp.Values), "value"), byteSize64(cp.Bytes.Values), plural(int(cp.Writes), "write"), byteSize64(cp.Bytes.Writes)),
				frac(cp.Bytes.Total(), most))
		})
	c.chansNo = placeholder("")
	c.tabs = container.NewAppTabs(
		container.NewTabItem("Channels", container.NewStack(c.chansNo, c.chans)),
		container.NewTabItem("Largest values", c.values),
		container.NewTabItem("Checkpoints", c.cps),
	)
	right := container.NewBorder(container.NewVBox(c.detail, container.NewBorder(nil, c.tGrowT, nil, nil, c.tGrowth)), nil, nil, nil, c.tabs)
	body := container.NewHSplit(left, right)
	body.Offset = 0.38

	// Giving space back.
	c.keep = widget.NewEntry()
	c.keep.SetText("20")
	c.older = widget.NewDateEntry()
	c.older.SetPlaceHolder("any date")
	c.scope = widget.NewRadioGroup([]string{"selected thread", "every thread"}, nil)
	c.scope.Horizontal = true
	c.scope.SetSelected("every thread")
	c.pruneB = widget.NewButtonWithIcon("Prune…", theme.ContentCutIcon(), c.askPrune)
	c.deleteB = widget.NewButtonWithIcon("Delete thread…", theme.DeleteIcon(), c.askDelete)
	c.deleteB.Importance = widget.DangerImportance
	c.vacuumB = widget.NewButtonWithIcon("Vacuum", theme.StorageIcon(), c.vacuum)
	c.full = widget.NewCheck("FULL (PostgreSQL: locks each table)", nil)
	c.progress = widget.NewProgressBar()
	c.progress.Hide()
	c.status = widget.NewLabel("")
	c.status.Wrapping = fyne.TextWrapWord
	c.cancelB = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), func() {
		if c.cancel != nil {
			c.cancel()
		}
	})
	c.cancelB.Hide()
	pruneRow := container.NewHBox(widget.NewLabel("Prune: keep the newest"), container.NewGridWrap(fyne.NewSize(64, c.keep.MinSize().Height), c.keep),
		widget.NewLabel("and what is newer than"), container.NewGridWrap(fyne.NewSize(150, c.older.MinSize().Height), c.older),
		widget.NewLabel("of"), c.scope, c.pruneB)
	actRow := container.NewHBox(c.deleteB, widget.NewSeparator(), c.vacuumB, c.full)
	foot := container.NewVBox(widget.NewSeparator(), pruneRow, container.NewBorder(nil, nil, actRow, c.cancelB, c.progress), c.status)

	c.win.SetContent(container.NewBorder(head, foot, nil, nil, body))
	c.win.Resize(fyne.NewSize(1100, 760))
	c.setEnabled()
	c.unsub = m.subscribe(chStore|chStorage, func(p part) {
		if p&chStore != 0 {
			// The studio opened another store: this window shows it.
			if c.cancel != nil {
				c.cancel()
			}
			c.win.SetTitle("Storage · " + m.storeName)
			c.title.SetText("Storage of " + m.storeName)
			c.threads.UnselectAll()
			c.load()
		}
		c.show()
	})
	return c
}

// show draws what the model holds of the store.
func (c *storageConsole) show() {
	if c.m.storage.sum != nil {
		c.showSummary()
	}
	c.showThread()
}

// sizeRow is the template of the size lists: a name, its size, a detail
// line and a bar.
func sizeRow() fyne.CanvasObject {
	name := widget.NewLabel("name")
	name.Truncation = fyne.TextTruncateEllipsis
	size := widget.NewLabel("size")
	size.TextStyle.Monospace = true
	sub := widget.NewLabel("")
	sub.SizeName = theme.SizeNameCaptionText
	sub.Importance = widget.LowImportance
	sub.Truncation = fyne.TextTruncateEllipsis
	return container.New(&tightVBox{}, container.NewBorder(nil, nil, nil, size, name), sub, newFracBar())
}

func setSizeRow(o fyne.CanvasObject, name, size, sub string, f float64) {
	box := o.(*fyne.Container)
	top := box.Objects[0].(*fyne.Container)
	top.Objects[0].(*widget.Label).SetText(name)
	top.Objects[1].(*widget.Label).SetText(size)
	box.Objects[1].(*widget.Label).SetText(sub)
	box.Objects[2].(*fracBar).set(f)
}

func frac(n, most int64) float64 {
	if most <= 0 {
		return 0
	}
	return float64(n) / float64(most)
}

func byteSize64(n int64) string { return byteSize(int(n)) }

func (c *storageConsole) threadCount() int {
	if c.m.storage.sum == nil {
		return 0
	}
	return len(c.m.storage.sum.LargestThreads)
}

func (c *storageConsole) cpCount() int {
	if c.m.storage.ts == nil {
		return 0
	}
	return len(c.m.storage.ts.Newest)
}

// valueRows are the largest values of the selected thread, else of the
// store (each thread's largest).
func (c *storageConsole) valueRows() []checkpoint.ValueSize {
	switch {
	case c.m.storage.ts != nil:
		return c.m.storage.ts.LargestValues
	case c.m.storage.sum != nil:
		return c.m.storage.sum.LargestValues
	}
	return nil
}

// reporter returns the store's storage report, or an error saying it has
// none.
func (c *storageConsole) reporter() (checkpoint.StorageReporter, error) {
	r, ok := c.m.store.(checkpoint.StorageReporter)
	if !ok {
		return nil, fmt.Errorf("this store (%T) cannot say where its bytes go", c.m.store)
	}
	return r, nil
}

// load reads the store's summary (and the selected thread's report).
func (c *storageConsole) load() {
	r, err := c.reporter()
	if err != nil {
		c.status.SetText(err.Error())
		return
	}
	c.reading.SetText("reading the store…")
	goBG(c.sess, func() (*checkpoint.StorageSummary, error) {
		return r.StorageSummary(context.Background(), checkpoint.StorageOptions{Top: storageTop})
	}, func(sum *checkpoint.StorageSummary, err error) {
		c.reading.SetText("")
		if err != nil {
			c.status.SetText("Reading the store failed: " + explain(err).Error())
			return
		}
		c.m.setStorageSummary(sum)
		if sel := c.m.storage.sel; sel != "" {
			c.selectThread(sel)
		}
	})
}

// loadDeep reads the whole store's bytes by channel (every value row).
func (c *storageConsole) loadDeep() {
	r, err := c.reporter()
	if err != nil {
		return
	}
	c.deepB.Disable()
	c.reading.SetText("reading every value's size, by channel (seconds on gigabytes)…")
	goBG(c.sess, func() (*checkpoint.StorageSummary, error) {
		return r.StorageSummary(context.Background(), checkpoint.StorageOptions{Top: storageTop, Deep: true})
	}, func(sum *checkpoint.StorageSummary, err error) {
		c.deepB.Enable()
		c.reading.SetText("")
		if err != nil {
			c.status.SetText("Reading the store failed: " + explain(err).Error())
			return
		}
		c.m.update(func() {
			c.m.setStorageSummary(sum)
			c.m.selectStorageThread("")
		})
		c.threads.UnselectAll()
		c.tabs.SelectIndex(0)
	})
}

// showSummary shows the store's summary.
func (c *storageConsole) showSummary() {
	sum := c.m.storage.sum
	c.title.SetText(fmt.Sprintf("Storage of %s (%s)", c.m.storeName, sum.Engine))
	b := sum.Bytes
	file := "in memory"
	if sum.FileBytes > 0 {
		file = byteSize64(sum.FileBytes)
	}
	free := byteSize64(sum.FreeBytes)
	if sum.FileBytes > 0 && sum.FreeBytes > 0 {
		free += fmt.Sprintf(" (%.0f %%)", 100*float64(sum.FreeBytes)/float64(sum.FileBytes))
	}
	for i, v := range []string{file, byteSize64(b.Total()), free, strconv.FormatInt(sum.Threads, 10), strconv.FormatInt(sum.Checkpoints, 10)} {
		c.cards[i].SetText(v)
	}
	c.mix.set(float64(b.Values), float64(b.Writes), float64(b.Headers))
	c.mixText[0].SetText(fmt.Sprintf("channel values of snapshots: %s in %s", byteSize64(b.Values), plural(int(sum.Values), "value")))
	c.mixText[1].SetText(fmt.Sprintf("pending writes: %s in %s", byteSize64(b.Writes), plural(int(sum.Writes), "write")))
	c.mixText[2].SetText(fmt.Sprintf("checkpoint headers and metadata: %s", byteSize64(b.Headers)))
	var pts []float64
	for _, g := range sum.Growth {
		pts = append(pts, float64(g.Bytes.Total()))
	}
	c.growth.set(pts)
	if n := len(sum.Growth); n > 0 {
		first, last := sum.Growth[0].Start, sum.Growth[n-1].Start
		c.growthT.SetText(fmt.Sprintf("Growth of the store, %s to %s, bytes added per span (spread over each thread's lifetime)", first.Local().Format("2006-01-02 15:04"), last.Local().Format("2006-01-02 15:04")))
	} else {
		c.growthT.SetText("Growth of the store: nothing stored yet")
	}
	c.threads.Refresh()
	// The rows moved: the selection follows the thread, not the row.
	c.quiet = true
	c.threads.UnselectAll()
	for i, t := range sum.LargestThreads {
		if t.ThreadID == c.m.storage.sel {
			c.threads.Select(i)
			break
		}
	}
	c.quiet = false
}

// selectThread reads thread id's report.
func (c *storageConsole) selectThread(id string) {
	r, err := c.reporter()
	if err != nil {
		return
	}
	c.m.selectStorageThread(id)
	goBG(c.sess, func() (*checkpoint.ThreadStorage, error) {
		return r.ThreadStorage(context.Background(), id, checkpoint.StorageOptions{Top: storageTop, Checkpoints: 500})
	}, func(ts *checkpoint.ThreadStorage, err error) {
		if c.m.storage.sel != id {
			return // another thread was chosen meanwhile
		}
		if errors.Is(err, checkpoint.ErrNotFound) {
			c.m.selectStorageThread("")
			return
		}
		if err != nil {
			c.status.SetText("Reading thread " + id + " failed: " + explain(err).Error())
			return
		}
		c.m.setThreadStorage(id, ts)
	})
}

// showThread shows the selected thread's report, or the store's lists
// when none is selected.
func (c *storageConsole) showThread() {
	ts := c.m.storage.ts
	if ts == nil {
		c.detail.SetText("Select a thread to see its bytes by channel, by checkpoint and by step. Until then the tabs show the whole store.")
		c.tGrowth.set(nil)
		c.tGrowT.SetText("")
	} else {
		ns := ""
		if ts.Namespaces > 1 {
			ns = fmt.Sprintf(" in %d namespaces", ts.Namespaces)
		}
		c.detail.SetText(fmt.Sprintf("Thread %s: %s%s, %s · values %s · writes %s · headers %s",
			ts.ThreadID, plural(int(ts.Checkpoints), "checkpoint"), ns, byteSize64(ts.Bytes.Total()),
			byteSize64(ts.Bytes.Values), byteSize64(ts.Bytes.Writes), byteSize64(ts.Bytes.Headers)))
		var pts []float64
		for _, g := range ts.Growth {
			pts = append(pts, float64(g.Bytes.Total()))
		}
		c.tGrowth.set(pts)
		if len(ts.Growth) > 0 {
			c.tGrowT.SetText(fmt.Sprintf("Bytes the thread's steps added, from step %d, %s a bar", ts.Growth[0].From, plural(max(1, ts.Growth[0].Steps), "step")))
		}
	}
	if len(c.m.storage.channels()) == 0 {
		c.chansNo.SetText("The whole store by channel reads every value's size: press \"By channel, whole store\" (seconds on gigabytes). A thread selected shows its own channels.")
		c.chansNo.Show()
		c.chans.Hide()
	} else {
		c.chansNo.Hide()
		c.chans.Show()
	}
	c.chans.Refresh()
	c.values.Refresh()
	c.cps.Refresh()
	c.setEnabled()
}

// setEnabled enables what can be done now.
func (c *storageConsole) setEnabled() {
	_, canPrune := c.m.store.(checkpoint.PolicyPruner)
	_, canVacuum := c.m.store.(checkpoint.Vacuumer)
	pg := c.m.storage.sum != nil && c.m.storage.sum.Engine == "postgres"
	enable(c.pruneB, !c.m.storage.busy && canPrune)
	enable(c.deleteB, !c.m.storage.busy && c.m.storage.sel != "")
	enable(c.vacuumB, !c.m.storage.busy && canVacuum)
	enable(c.full, !c.m.storage.busy && pg)
	enable(c.deepB, !c.m.storage.busy)
	if !pg {
		c.full.SetChecked(false)
	}
}

// policy reads the prune fields: the policy, and what it does in words.
func (c *storageConsole) policy() (checkpoint.PrunePolicy, string, error) {
	var p checkpoint.PrunePolicy
	keepText := strings.TrimSpace(c.keep.Text)
	keep := -1
	if keepText != "" {
		n, err := strconv.Atoi(keepText)
		if err != nil || n < 0 {
			return p, "", fmt.Errorf("keep the newest %q: give a number of checkpoints, 0 or more", keepText)
		}
		keep = n
	}
	if keep < 0 && c.older.Date == nil {
		return p, "", errors.New("say how many newest checkpoints to keep, or pick a date: older checkpoints go")
	}
	p.KeepLatest = max(keep, 0)
	what := ""
	switch {
	case c.older.Date != nil && keep < 0:
		p.KeepLatest = 1 // by age alone every thread keeps its newest, so it can still be resumed
		p.OlderThan = *c.older.Date
		what = fmt.Sprintf("every checkpoint written before %s, except each namespace's newest", c.older.Date.Format("2006-01-02"))
	case c.older.Date != nil:
		p.OlderThan = *c.older.Date
		what = fmt.Sprintf("every checkpoint written before %s that is not among the %d newest of its namespace", c.older.Date.Format("2006-01-02"), keep)
	default:
		what = fmt.Sprintf("every checkpoint but the %d newest of each namespace", keep)
	}
	if c.scope.Selected == "selected thread" {
		if c.m.storage.sel == "" {
			return p, "", errors.New("select a thread to prune, or choose every thread")
		}
		p.Threads = []string{c.m.storage.sel}
		what += " of thread " + c.m.storage.sel
	} else {
		p.AllThreads = true
		what += " of every thread"
	}
	return p, what, nil
}

// askPrune asks before pruning what the fields say.
func (c *storageConsole) askPrune() {
	p, what, err := c.policy()
	if err != nil {
		c.status.SetText("Not pruned: " + err.Error() + ".")
		return
	}
	c.ask("Prune the store?", "Delete "+what+", with their writes and the values nothing else refers to?\n\nThis cannot be undone. Threads another process is running are left alone (the prune stops there and says so).",
		"Prune", func() { c.prune(p) })
}

// ask asks a question whose yes destroys something (its button says
// verb, in the danger colour), and runs then on yes.
func (c *storageConsole) ask(title, question, verb string, then func()) {
	d := dialog.NewConfirm(title, question, func(ok bool) {
		if ok {
			then()
		}
	}, c.win)
	d.SetConfirmText(verb)
	d.SetConfirmImportance(widget.DangerImportance)
	d.Show()
}

// begin starts an operation: the actions are disabled, the progress bar
// and Cancel show. It returns the operation's context.
func (c *storageConsole) begin(what string) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.m.setStorageBusy(true)
	c.status.SetText(what)
	c.progress.SetValue(0)
	c.progress.Show()
	c.cancelB.Show()
	c.setEnabled()
	return ctx
}

// end ends the operation begun.
func (c *storageConsole) end(text string) {
	if c.cancel != nil {
		c.cancel()
	}
	c.cancel = nil
	c.m.setStorageBusy(false)
	c.progress.Hide()
	c.cancelB.Hide()
	c.status.SetText(text)
	c.setEnabled()
}

// prune prunes by p in the background, a thread at a time, showing how
// far it is; a thread another process runs is skipped and named.
func (c *storageConsole) prune(p checkpoint.PrunePolicy) {
	pr, ok := c.m.store.(checkpoint.PolicyPruner)
	if !ok {
		return
	}
	ctx := c.begin("Pruning…")
	p.Progress = func(done, total int) {
		if total > 0 {
			uiDo(func() { c.progress.SetValue(float64(done) / float64(total)) })
		}
	}
	if l, ok := c.m.store.(checkpoint.Leaser); ok {
		// A thread a run holds is skipped, and a dead run's lease kept for
		// a worker: the same hold as weft's prune commands.
		p.Hold = checkpoint.HoldForPrune(l, engine.DefaultLeaseOwner()+" (storage console)")
	}
	goBG(c.sess, func() (checkpoint.PruneResult, error) {
		return pr.PruneBy(ctx, p)
	}, func(res checkpoint.PruneResult, err error) {
		text := fmt.Sprintf("Pruned %s of %s: %s, %s, %s of rows. The file keeps its size until Vacuum.",
			plural(int(res.Checkpoints), "checkpoint"), plural(res.Threads, "thread"), plural(int(res.Values), "value"),
			plural(int(res.Writes), "write"), byteSize64(res.Bytes.Total()))
		if n := len(res.Skipped); n > 0 {
			text += fmt.Sprintf(" Skipped %s a run holds: %s.", plural(n, "thread"), res.Skipped[0].Reason)
		}
		var held *checkpoint.LeaseHeldError
		switch {
		case errors.As(err, &held):
			text = fmt.Sprintf("Stopped: %v. Nothing of that thread was pruned; what was pruned before it stays pruned (%s).", err, plural(int(res.Checkpoints), "checkpoint"))
		case errors.Is(err, context.Canceled):
			text = fmt.Sprintf("Cancelled after %s.", plural(int(res.Checkpoints), "checkpoint"))
		case err != nil:
			text = "Prune failed: " + explain(err).Error()
		}
		c.end(text)
		c.load()
		if res.Checkpoints > 0 && c.onChanged != nil {
			c.onChanged()
		}
	})
}

// askDelete asks before deleting the selected thread.
func (c *storageConsole) askDelete() {
	thread := c.m.storage.sel
	if thread == "" {
		return
	}
	c.ask("Delete thread", "Delete thread "+thread+" and all its checkpoints? This cannot be undone; export it first to keep a copy.",
		"Delete", func() { c.deleteThread(thread) })
}

func (c *storageConsole) deleteThread(thread string) {
	ctx := c.begin("Deleting thread " + thread + "…")
	goBG(c.sess, func() (struct{}, error) {
		return struct{}{}, c.m.store.DeleteThread(ctx, thread)
	}, func(_ struct{}, err error) {
		if err != nil {
			c.end("Deleting thread " + thread + " failed: " + explain(err).Error())
			return
		}
		c.end("Deleted thread " + thread + ". The file keeps its size until Vacuum.")
		if c.m.storage.sel == thread {
			c.m.selectStorageThread("")
			c.threads.UnselectAll()
		}
		c.load()
		if c.onChanged != nil {
			c.onChanged()
		}
	})
}

// vacuum rewrites the store, showing its progress and the bytes
// reclaimed.
func (c *storageConsole) vacuum() {
	v, ok := c.m.store.(checkpoint.Vacuumer)
	if !ok {
		return
	}
	opts := checkpoint.VacuumOptions{Full: c.full.Checked}
	ctx := c.begin("Vacuuming… readers keep reading; writers may wait.")
	opts.Progress = func(p checkpoint.VacuumProgress) {
		uiDo(func() {
			if !c.m.storage.busy {
				return
			}
			if p.Total > 0 {
				c.progress.SetValue(float64(p.Done) / float64(p.Total))
			}
			if p.Phase != "" {
				c.status.SetText("Vacuuming: " + p.Phase + "…")
			}
		})
	}
	goBG(c.sess, func() (checkpoint.VacuumResult, error) {
		return v.Vacuum(ctx, opts)
	}, func(res checkpoint.VacuumResult, err error) {
		switch {
		case errors.Is(err, context.Canceled):
			c.end("Vacuum cancelled; the store is as it was.")
		case err != nil:
			c.end("Vacuum failed: " + explain(err).Error())
		default:
			c.end(fmt.Sprintf("Vacuum reclaimed %s in %s: %s → %s.", byteSize64(res.Reclaimed), dur(res.Took),
				byteSize64(res.BytesBefore), byteSize64(res.BytesAfter)))
		}
		c.load()
	})
}
