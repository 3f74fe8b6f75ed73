extension Duration {
    /// Whole milliseconds, for logs, results and latency figures.
    package var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    /// Seconds with their fraction (`eval`'s seconds per photo, a wait handed to a `Date`-based API).
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
