import Foundation

/// When a remote service said to come back: vision providers and book sources read it the same way.
package enum QuotaTimes {
    /// `Retry-After`: delay-seconds or an HTTP date, as seconds from `now`.
    package static func retryAfter(_ value: String, now: Date) -> TimeInterval? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(text) { return seconds >= 0 ? TimeInterval(seconds) : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text).map { max(0, $0.timeIntervalSince(now)) }
    }

    /// Google's per-day quotas (Gemini, Google Books) reset at midnight Pacific time.
    package static func nextPacificMidnight(after now: Date) -> Date {
        nextMidnight(
            in: TimeZone(identifier: "America/Los_Angeles") ?? TimeZone(secondsFromGMT: -8 * 3600)!, after: now)
    }

    /// Cloudflare's daily neuron allocation resets at midnight UTC.
    package static func nextUTCMidnight(after now: Date) -> Date {
        nextMidnight(in: TimeZone(secondsFromGMT: 0)!, after: now)
    }

    static func nextMidnight(in timeZone: TimeZone, after now: Date) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let tomorrow = calendar.date(byAdding: .day, value: 1, to: now) ?? now.addingTimeInterval(86_400)
        return calendar.startOfDay(for: tomorrow)
    }
}
