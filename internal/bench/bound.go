package bench

// BoundTool names W1's bound in the report: the minimal client of issue 14
// (package bound, run by the benchbound command) that ferry's time is held
// against.
const BoundTool = "bound (minimal client)"
