import Foundation
internal import ShelfCore
internal import ShelfHTTP

/// A vision provider's failed request, read the same way for every provider: the failure decides the error's
/// code and what the queue does with the photo, and the sentences' shape; `Wording` gives the provider's own
/// names and advice. A provider reads its own error bodies first (Cloudflare's codes, Gemini's quota ids)
/// and hands the rest here.
struct ProviderHTTPFailure: Sendable {
    /// A sentence around a detail in brackets: "\(lead) (HTTP 403, PERMISSION_DENIED: …)\(tail)".
    struct Sentence: Sendable {
        var lead: String
        var tail: String
        /// Whether the server's own words follow the status in the brackets.
        var quotesServer = true
    }

    /// One provider's words for the failures every provider has.
    struct Wording: Sendable {
        /// The service as a sentence's subject: "Gemini", "The server at http://127.0.0.1:11434/v1".
        var name: String
        /// Its table in shelfd.toml, for the settings a message points to: "gemini".
        var section: String
        /// Scrubbed from anything a server or library says, should one ever echo them.
        var secrets: [String]

        /// What a cancelled request went to: "The request to \(target) was cancelled…".
        var target: String
        /// Where a connection goes: "Gemini at generativelanguage.googleapis.com".
        var address: String
        /// The subject of "… did not answer within 120 s".
        var timeoutSubject: String
        var timeout: Duration
        /// After `[section] timeout_s` in the brackets: why the limit may need raising.
        var timeoutNote = ""
        /// No connection; nil: "Could not connect to \(address) (…). Check the network and [section] base_url".
        var unreachable: Sentence?

        /// 401, and 403 unless `forbidden` says otherwise.
        var unauthorized: Sentence
        var forbidden: Sentence?
        /// 404.
        var missingModel: Sentence
        /// 413.
        var tooLarge: Sentence
        /// 429: what to lower should it keep happening, "lower [gemini] requests_per_minute".
        var rateLimitAdvice: String
        var rateLimitQuotesServer = false
        /// The wait in a 429's sentence: "2.5" by default.
        var waitSeconds: @Sendable (TimeInterval) -> String = formatSeconds
        /// The lead for 408, 500, 502, 503 and 504: "Gemini is unavailable".
        var unavailable: String
        /// The lead for any other 5xx; nil: `unavailable`.
        var failing: String?
        /// After "It will not be retried." for another 4xx.
        var rejectedHint = ""
    }

    var wording: Wording

    /// No answer at all: always retried, since the next attempt may connect.
    func network(_ error: HTTPError) -> PhotoError {
        let said = redacting(wording.secrets, in: error.message)
        let message: String
        switch error.kind {
        case .timeout:
            message =
                "\(wording.timeoutSubject) did not answer within \(wording.timeout.components.seconds) s "
                + "([\(wording.section)] timeout_s\(wording.timeoutNote)). It will be retried."
        case .cancelled:
            message = "The request to \(wording.target) was cancelled (shelfd is stopping). It will be sent again."
        case .connect:
            let sentence =
                wording.unreachable
                ?? Sentence(
                    lead: "Could not connect to \(wording.address)",
                    tail: ". Check the network and [\(wording.section)] base_url; it will be retried.")
            message = sentence.lead + " (\(said))" + sentence.tail
        case .send, .receive, .other:
            message = "The connection to \(wording.address) failed (\(said)). It will be retried."
        }
        return PhotoError(.network, message, disposition: .retry(after: nil))
    }

    /// An answer other than 200 that the provider's own reading left: `said` is the server's words
    /// (`serverText`), `wait` how long a 429 waits.
    func status(_ response: HTTPResponse, said: String, wait: TimeInterval, now: Date) -> PhotoError {
        let status = response.status
        switch status {
        case 401:
            return refused(wording.unauthorized, response, said: said)
        case 403:
            return refused(wording.forbidden ?? wording.unauthorized, response, said: said)
        case 404:
            return PhotoError(
                .providerModel, say(wording.missingModel, response, said: said), disposition: .providerBroken)
        case 413:
            return tooLarge(response, said: said)
        case 429:
            return rateLimited(said: said, wait: wait, now: now)
        case 408, 500, 502, 503, 504:
            return unavailable(wording.unavailable, response, said: said, now: now)
        case 500...599:
            return unavailable(wording.failing ?? wording.unavailable, response, said: said, now: now)
        case 400...499:
            return rejected(response, said: said)
        default:
            return PhotoError(
                .providerNonsense,
                "\(wording.name) answered with HTTP \(status), which shelfd does not expect. "
                    + "It will be retried; check [\(wording.section)] base_url.", disposition: .retry(after: nil))
        }
    }

    /// The credential was refused: nothing is sent until the configuration changes.
    func refused(_ sentence: Sentence, _ response: HTTPResponse, said: String) -> PhotoError {
        PhotoError(.providerAuth, say(sentence, response, said: said), disposition: .providerBroken)
    }

    func tooLarge(_ response: HTTPResponse, said: String) -> PhotoError {
        PhotoError(.photoTooLarge, say(wording.tooLarge, response, said: said), disposition: .dead)
    }

    /// About this photo's request alone: the photo is not tried again.
    func rejected(_ response: HTTPResponse, said: String) -> PhotoError {
        PhotoError(
            .providerRejected,
            "\(wording.name) rejected the request for this photo (HTTP \(response.status)\(said)). "
                + "It will not be retried.\(wording.rejectedHint)", disposition: .dead)
    }

    private func rateLimited(said: String, wait: TimeInterval, now: Date) -> PhotoError {
        let said = wording.rateLimitQuotesServer ? said : ""
        return PhotoError(
            .providerRateLimited,
            "\(wording.name) is rate-limiting requests (HTTP 429\(said)). Sending resumes in "
                + "\(wording.waitSeconds(wait)) s; \(wording.rateLimitAdvice) if this keeps happening.",
            disposition: .providerWait(until: now.addingTimeInterval(wait)))
    }

    private func unavailable(_ lead: String, _ response: HTTPResponse, said: String, now: Date) -> PhotoError {
        PhotoError(
            .providerUnavailable, "\(lead) (HTTP \(response.status)\(said)). It will be retried.",
            disposition: .retry(after: Self.retryAfter(response, now: now)))
    }

    private func say(_ sentence: Sentence, _ response: HTTPResponse, said: String) -> String {
        "\(sentence.lead) (HTTP \(response.status)\(sentence.quotesServer ? said : ""))\(sentence.tail)"
    }

    /// The answer's `Retry-After`, in seconds from `now`.
    static func retryAfter(_ response: HTTPResponse, now: Date) -> TimeInterval? {
        response.header("retry-after").flatMap { QuotaTimes.retryAfter($0, now: now) }
    }
}
