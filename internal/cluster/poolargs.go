package cluster

// PoolArgs groups drive arguments into server pools as Parse does
// (poolArgs): one group of arguments per pool, in order.
func PoolArgs(args []string) [][]string { return poolArgs(args) }
