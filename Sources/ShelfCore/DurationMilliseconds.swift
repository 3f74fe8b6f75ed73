extension Duration {
    /// Whole milliseconds, for logs, results and latency figures.
    package var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
