import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import Hummingbird
import NIOCore

/// A multipart/form-data body read as it arrives: the parts' names and bytes in order, never the whole body in
/// memory. Fed chunk by chunk; each call returns what the bytes so far decide (a part's bytes are held back
/// only by the length of a delimiter, which may be split between two chunks).
struct MultipartStream {
    enum Event: Equatable {
        case part(name: String, filename: String?)
        case bytes([UInt8])
        case partEnd
    }

    struct Malformed: Error {}

    private enum Phase { case preamble, afterDelimiter, headers, body, done }

    /// `\r\n--boundary`; the body's first delimiter has no line break before it, so one is read in front of it.
    private let delimiter: [UInt8]
    private var pending: [UInt8] = [13, 10]
    private var phase = Phase.preamble
    /// A part's headers longer than this are not a browser's.
    static let headersLimit = 16 * 1024

    init(boundary: String) { delimiter = Array("\r\n--\(boundary)".utf8) }

    /// The `boundary` parameter of a `multipart/form-data` Content-Type.
    static func boundary(of contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].lowercased() == "boundary" {
                return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return nil
    }

    /// True once the closing delimiter has been read: the form arrived whole.
    var isComplete: Bool { phase == .done }

    mutating func feed(_ chunk: some Collection<UInt8>) throws(Malformed) -> [Event] {
        guard phase != .done else { return [] }
        pending.append(contentsOf: chunk)
        var events: [Event] = []
        while true {
            switch phase {
            case .preamble:
                guard let at = Self.find(delimiter, in: pending) else {
                    pending.removeFirst(max(0, pending.count - delimiter.count + 1))
                    return events
                }
                pending.removeFirst(at + delimiter.count)
                phase = .afterDelimiter
            case .afterDelimiter:
                guard pending.count >= 2 else { return events }
                if pending[0] == 45, pending[1] == 45 { // "--": the last delimiter
                    phase = .done
                    pending = []
                    return events
                }
                guard pending[0] == 13, pending[1] == 10 else { throw Malformed() }
                pending.removeFirst(2)
                phase = .headers
            case .headers:
                guard let end = Self.find(Array("\r\n\r\n".utf8), in: pending) else {
                    if pending.count > Self.headersLimit { throw Malformed() }
                    return events
                }
                let headers = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeFirst(end + 4)
                guard
                    let disposition = headers.split(separator: "\r\n")
                        .first(where: { $0.lowercased().hasPrefix("content-disposition:") })
                else { throw Malformed() }
                events.append(
                    .part(
                        name: Self.parameter("name", in: disposition) ?? "",
                        filename: Self.parameter("filename", in: disposition)))
                phase = .body
            case .body:
                if let at = Self.find(delimiter, in: pending) {
                    if at > 0 { events.append(.bytes(Array(pending[..<at]))) }
                    events.append(.partEnd)
                    pending.removeFirst(at + delimiter.count)
                    phase = .afterDelimiter
                } else {
                    let safe = pending.count - (delimiter.count - 1)
                    if safe > 0 {
                        events.append(.bytes(Array(pending[..<safe])))
                        pending.removeFirst(safe)
                    }
                    return events
                }
            case .done:
                return events
            }
        }
    }

    private static func parameter(_ name: String, in header: Substring) -> String? {
        for item in header.split(separator: ";").dropFirst() {
            let pair = item.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].lowercased() == name {
                return String(pair[1]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return nil
    }

    /// Where `needle` starts in `haystack` (memchr and memcmp: a photo's megabytes are searched for the delimiter).
    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        haystack.withUnsafeBytes { hay in
            needle.withUnsafeBytes { pin in
                guard let start = hay.baseAddress, let wanted = pin.baseAddress, pin.count > 0, hay.count >= pin.count
                else { return nil }
                let last = hay.count - pin.count
                var at = 0
                while at <= last {
                    guard let hit = memchr(start + at, Int32(pin[0]), last - at + 1) else { return nil }
                    let index = start.distance(to: UnsafeRawPointer(hit))
                    if memcmp(start + index, wanted, pin.count) == 0 { return index }
                    at = index + 1
                }
                return nil
            }
        }
    }
}

/// A request body the CSRF middleware has read the start of, given back whole to the route: the bytes read ahead, then
/// the rest as it arrives. The body is still read once, by one reader at a time.
struct ResumedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let head: ByteBuffer
    let rest: Rest

    /// The original body's iterator, handed from the CSRF middleware to the route (never read by both).
    final class Rest: @unchecked Sendable {
        var iterator: RequestBody.AsyncIterator
        init(_ iterator: RequestBody.AsyncIterator) { self.iterator = iterator }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var head: ByteBuffer?
        let rest: Rest

        mutating func next() async throws -> ByteBuffer? {
            if let buffer = head {
                head = nil
                if buffer.readableBytes > 0 { return buffer }
            }
            return try await rest.iterator.next()
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(head: head, rest: rest) }
}

extension Request {
    /// The first field of a multipart/form-data body, read before anything else of it (nil when the first part
    /// is a file, is too long, or is not `name`), with the body left whole for the route.
    mutating func firstMultipartField(_ name: String, boundary: String) async throws -> String? {
        var reader = MultipartStream(boundary: boundary)
        var iterator = body.makeAsyncIterator()
        var read = ByteBuffer()
        var field: String?
        var value: [UInt8] = []
        reading: while let chunk = try await iterator.next() {
            read.writeImmutableBuffer(chunk)
            guard let events = try? reader.feed(chunk.readableBytesView) else { break }
            for event in events {
                switch event {
                case .part(let partName, let filename):
                    guard partName == name, filename == nil else { break reading }
                    field = partName
                case .bytes(let bytes):
                    value += bytes
                    if value.count > 1024 { break reading }
                case .partEnd:
                    body = RequestBody(asyncSequence: ResumedBody(head: read, rest: .init(iterator)))
                    return field == nil ? nil : String(decoding: value, as: UTF8.self)
                }
            }
            if read.readableBytes > MultipartStream.headersLimit + 2048 { break }
        }
        body = RequestBody(asyncSequence: ResumedBody(head: read, rest: .init(iterator)))
        return nil
    }
}
