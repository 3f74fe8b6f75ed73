import Foundation
import ShelfCore

extension SpineMatchLine {
    /// The line for `text` as the matcher decided it.
    package init(text: String, result: MatchResult) {
        self.init(
            text: text, match: result.best.map { Record($0, withScore: false) },
            score: result.best?.score ?? result.candidates.first?.score ?? 0, decision: result.decision,
            candidates: result.candidates.map { Record($0, withScore: true) })
    }
}
