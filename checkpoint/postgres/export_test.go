package postgres

// WithSchemaUpTo stops Open's migrations at schema version v, so tests can
// build an old schema and watch Open upgrade it.
func WithSchemaUpTo(v int) Option { return func(o *options) { o.upTo = v } }
