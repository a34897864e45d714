//go:build !unix

package proc

// alive cannot tell here: leases of processes that ended are waited out.
func alive(int) answer { return unknown }
