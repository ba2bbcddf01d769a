package jsonschema

// MetaSchemasCompiled reports whether the drafts' meta-schemas are
// compiled (for TestMetaSchemasLazy).
func MetaSchemasCompiled() bool { return Draft2020.sch != nil }
