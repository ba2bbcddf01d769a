package lock

import _ "embed"

// Schema is the JSON Schema of ferry.lock (draft 2020-12), shipped in the
// repository as lock/schema.json.
//
//go:embed schema.json
var Schema []byte
