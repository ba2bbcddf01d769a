package porter

// The binary registers every format from package formats' initialiser;
// this package's tests register this one, as that does.
func init() { Register() }
