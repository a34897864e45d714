package studio

// Tests keep no breakpoints or watches between studios unless a test asks
// for a directory of its own.
func init() { debugDir = func() (string, error) { return "", nil } }
