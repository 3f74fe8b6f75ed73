/// The one-to-one assignment of rows to columns with the greatest total benefit (the Hungarian method,
/// O(rows² · columns)). A row may stay unassigned: every row also has a column of its own worth 0.
enum Assignment {
    /// For each row, its column, or nil when leaving it unassigned is as good.
    static func maximising(_ benefit: [[Double]]) -> [Int?] {
        let rows = benefit.count
        guard rows > 0 else { return [] }
        let real = benefit[0].count
        guard real > 0 else { return [Int?](repeating: nil, count: rows) }
        let columns = real + rows
        // Costs, 1-based as the method is written: cost[i][j] = -benefit, and 0 for the "unassigned" columns.
        func cost(_ i: Int, _ j: Int) -> Double { j <= real ? -benefit[i - 1][j - 1] : 0 }
        var u = [Double](repeating: 0, count: rows + 1), v = [Double](repeating: 0, count: columns + 1)
        var rowOf = [Int](repeating: 0, count: columns + 1), way = [Int](repeating: 0, count: columns + 1)
        for i in 1...rows {
            rowOf[0] = i
            var j0 = 0
            var least = [Double](repeating: .infinity, count: columns + 1)
            var used = [Bool](repeating: false, count: columns + 1)
            repeat {
                used[j0] = true
                let i0 = rowOf[j0]
                var delta = Double.infinity, j1 = 0
                for j in 1...columns where !used[j] {
                    let reduced = cost(i0, j) - u[i0] - v[j]
                    if reduced < least[j] { least[j] = reduced; way[j] = j0 }
                    if least[j] < delta { delta = least[j]; j1 = j }
                }
                for j in 0...columns {
                    if used[j] { u[rowOf[j]] += delta; v[j] -= delta } else { least[j] -= delta }
                }
                j0 = j1
            } while rowOf[j0] != 0
            repeat {
                let j1 = way[j0]
                rowOf[j0] = rowOf[j1]
                j0 = j1
            } while j0 != 0
        }
        var chosen = [Int?](repeating: nil, count: rows)
        for j in 1...real where rowOf[j] != 0 && benefit[rowOf[j] - 1][j - 1] > 0 { chosen[rowOf[j] - 1] = j - 1 }
        return chosen
    }
}
