package proc

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// deadLease is how a hold's row keeps the lapsed lease it took over (the
// run that died there): stored with the hold, so that it survives the
// holder being killed, and put back when the hold is released.
type deadLease struct {
	Owner   string    `json:"owner"`
	Token   string    `json:"token"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
	StopBy  string    `json:"stop_by,omitempty"`
	Holder  string    `json:"holder,omitempty"`
}

// EncodeDead encodes l for a hold's row; "" for nil.
func EncodeDead(l *checkpoint.Lease) string {
	if l == nil {
		return ""
	}
	b, _ := json.Marshal(deadLease{l.Owner, l.Token, l.Since, l.Expires, l.StopRequested, l.Holder})
	return string(b)
}

// DecodeDead decodes what EncodeDead stored for thread; nil for "".
func DecodeDead(thread, s string) (*checkpoint.Lease, error) {
	if s == "" {
		return nil, nil
	}
	var d deadLease
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		return nil, fmt.Errorf("the lease of thread %q keeps an unreadable dead run's lease: %w", thread, err)
	}
	return &checkpoint.Lease{ThreadID: thread, Owner: d.Owner, Token: d.Token, Since: d.Since, Expires: d.Expires,
		StopRequested: d.StopBy, Holder: d.Holder, Expired: true, Ended: Ended(d.Holder)}, nil
}
