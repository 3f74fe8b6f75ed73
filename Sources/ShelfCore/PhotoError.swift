import Foundation

/// Why a photo could not be turned into books, and what the queue should do about it (ARCHITECTURE.md, "The queue's states").
/// `code` is stable: it is `status --json`'s `problems[].code`. `message` is for a person.
package struct PhotoError: Error, Sendable, CustomStringConvertible, Equatable {
    package enum Code: String, Sendable, Codable {
        case unreadableImage = "unreadable_image" // not an image, truncated, corrupt
        case unsupportedFormat = "unsupported_format" // PNG/HEIC/WebP for now
        case photoTooLarge = "photo_too_large"
        case photoVanished = "photo_vanished" // deleted before it was taken
        case permissionDenied = "permission_denied"
        case providerAuth = "provider_auth" // bad key, missing key, no permission
        case providerModel = "provider_model" // unknown or retired model
        case providerQuota = "provider_quota" // daily quota used up
        case providerRateLimited = "provider_rate_limited"
        case providerUnavailable = "provider_unavailable" // 5xx, overloaded
        case providerRejected = "provider_rejected" // 400 on this photo
        case providerBlocked = "provider_blocked" // safety filters, blocked prompt
        case providerTruncated = "provider_truncated" // MAX_TOKENS
        case providerNonsense = "provider_nonsense" // an answer that is not the JSON asked for
        case network = "network"
        /// The process died while the photo was being read, too many times in a row (`Queue.recoverLeases`).
        case processDied = "process_died"
        case `internal` = "internal"
    }

    /// What the queue does with the job.
    package enum Disposition: Sendable, Equatable {
        /// Transient: the attempt counts; retry after the server's delay, else exponential backoff.
        case retry(after: TimeInterval?)
        /// The provider is paused until then (quota, rate limit); the photo is not charged an attempt.
        case providerWait(until: Date)
        /// A configuration problem (key, model, permission): the provider is paused until the
        /// configuration changes; the photo is not charged an attempt.
        case providerBroken
        /// The photo itself cannot be done: `dead`, never retried in a loop.
        case dead
    }

    package var code: Code
    package var message: String
    package var disposition: Disposition

    package init(_ code: Code, _ message: String, disposition: Disposition) {
        self.code = code; self.message = message; self.disposition = disposition
    }

    package var description: String { "\(code.rawValue): \(message)" }

    /// The first sentence of the message, for `status`: "Could not connect to Gemini at … (…)" without the advice
    /// that follows it. A full stop inside parentheses does not end it.
    package var shortReason: String {
        var depth = 0
        var previous: Character = " "
        for index in message.indices {
            let character = message[index]
            if character == "(" { depth += 1 } else if character == ")" { depth = max(0, depth - 1) }
            if depth == 0, character == " ", previous == "." || previous == ";" {
                return String(message[..<message.index(before: index)])
            }
            previous = character
        }
        return message.hasSuffix(".") ? String(message.dropLast()) : message
    }
}
