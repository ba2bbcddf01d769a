package resolve

// CountRounds returns opts counting the rounds Resolve runs into n.
func CountRounds(opts Options, n *int) Options {
	opts.rounds = n
	return opts
}
