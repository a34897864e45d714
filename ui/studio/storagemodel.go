package studio

import "github.com/weftstudio/weft/checkpoint"

// storageState is the model's part the storage window shows: what it
// read of the store (the summary, and the report of the thread selected
// there) and whether an operation on the store (prune, delete, vacuum) is
// going. The zero value is nothing read yet; another store starts from it.
type storageState struct {
	sum  *checkpoint.StorageSummary
	sel  string                    // the thread selected in the storage window
	ts   *checkpoint.ThreadStorage // sel's report; nil until read, or with none selected
	busy bool
}

// channels are the bytes by channel the window lists: the selected
// thread's, else the whole store's (read only on request).
func (st *storageState) channels() []checkpoint.ChannelBytes {
	switch {
	case st.ts != nil:
		return st.ts.Channels
	case st.sum != nil:
		return st.sum.Channels
	}
	return nil
}

// setStorageSummary records what the store said of itself.
func (m *model) setStorageSummary(sum *checkpoint.StorageSummary) {
	m.storage.sum = sum
	m.changed(chStorage)
}

// selectStorageThread selects thread id in the storage window ("" for
// none); its report keeps the previous one's place until it is read.
func (m *model) selectStorageThread(id string) {
	if id == "" {
		m.storage.ts = nil
	}
	m.storage.sel = id
	m.changed(chStorage)
}

// setThreadStorage records the report of the selected thread id.
func (m *model) setThreadStorage(id string, ts *checkpoint.ThreadStorage) {
	if id != m.storage.sel {
		return // another thread was chosen meanwhile
	}
	m.storage.ts = ts
	m.changed(chStorage)
}

// setStorageBusy says an operation on the store began or ended.
func (m *model) setStorageBusy(busy bool) {
	if m.storage.busy != busy {
		m.storage.busy = busy
		m.changed(chStorage)
	}
}
