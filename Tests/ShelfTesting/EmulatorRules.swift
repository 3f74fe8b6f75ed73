/// Which requests a scripted rule applies to, judged by the image the request carried.
package enum EmulatedPhotoMatch: Sendable {
    case any
    /// Lower-case hex SHA-256 of the image bytes.
    case sha256(String)
    /// The image bytes contain this ASCII text (a JPEG comment, say).
    case marker(String)

    func matches(image: [UInt8], sha256: String) -> Bool {
        switch self {
        case .any: true
        case .sha256(let hex): hex.lowercased() == sha256
        case .marker(let text): image.firstRange(of: Array(text.utf8)) != nil
        }
    }
}

/// Replies for the matching photos, used in order; the last one repeats.
package struct EmulatorRule<Reply: Sendable>: Sendable {
    package var photo: EmulatedPhotoMatch
    package var replies: [Reply]
    package var latency: Duration?

    package init(photo: EmulatedPhotoMatch, replies: [Reply], latency: Duration? = nil) {
        self.photo = photo; self.replies = replies; self.latency = latency
    }
}

/// How far each rule of a script has got: every emulator answers the same way from its rules.
struct RuleProgress {
    private var used: [Int: Int] = [:]

    /// The first rule matching the image answers (its next reply, and its latency if it has one);
    /// with none, `fallback` after `latency`.
    mutating func reply<Reply>(
        rules: [EmulatorRule<Reply>], fallback: Reply, latency: Duration,
        image: [UInt8], sha256: String
    ) -> (Reply, Duration) {
        for (index, rule) in rules.enumerated() where rule.photo.matches(image: image, sha256: sha256) {
            let count = used[index, default: 0]
            used[index] = count + 1
            let reply = rule.replies.isEmpty ? fallback : rule.replies[min(count, rule.replies.count - 1)]
            return (reply, rule.latency ?? latency)
        }
        return (fallback, latency)
    }
}
