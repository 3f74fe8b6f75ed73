import Foundation
import ShelfApp
import ShelfCore
import ShelfDaemon

/// `shelfd review` on a terminal: the open books one at a time, a photo at a time (its spines in the order they
/// stand), a key for each decision.
struct ReviewWalk {
    let desk: ReviewDesk
    let terminal = Terminal()

    func run() throws {
        let photos = ReviewItem.byPhoto(try desk.items())
        let total = photos.reduce(0) { $0 + $1.count }
        guard total > 0 else { return terminal.say("Nothing to review.") }
        let walked = photos.flatMap { photo in photo.enumerated().map { (item: $1, spine: $0 + 1, of: photo.count) } }
        var decided = 0, skipped = 0
        walk: for (n, listed) in walked.enumerated() {
            // Another `shelfd review` or a rescan may have closed it since the list was read.
            guard let item = try? desk.item(listed.item.id) else { continue }
            terminal.say(
                "\n[\(n + 1)/\(total)] \(item.photo.path), spine \(listed.spine) of \(listed.of)\n"
                    + ReviewText.details(item, desk: desk))
            let picks = min(9, item.candidates.count)
            let keys =
                "a accept" + (picks == 0 ? "" : picks == 1 ? " · 1 pick" : " · 1-\(picks) pick")
                + " · e edit · r reject · s skip · q quit"
            while true {
                terminal.say("\(keys) > ", newline: false)
                guard let key = terminal.readKey() else { break walk } // end of input
                let verdict: ReviewVerdict
                switch key {
                case "a", "r":
                    terminal.say(String(key))
                    verdict = key == "a" ? .accept : .reject
                case "1"..."9":
                    terminal.say(String(key))
                    guard let number = key.wholeNumberValue, number <= picks else {
                        terminal.say("No candidate \(key).")
                        continue
                    }
                    verdict = .pick(number)
                case "e":
                    terminal.say("e")
                    guard let edit = edit(item.book) else { continue }
                    verdict = edit
                case "s":
                    terminal.say("s — skipped")
                    skipped += 1
                    continue walk
                case "q", "\u{3}", "\u{4}": // q, Ctrl-C, Ctrl-D
                    terminal.say("q")
                    break walk
                default:
                    continue // Enter, space, anything else
                }
                do {
                    terminal.say("→ " + ReviewText.resolution(try desk.decide(item.id, verdict)))
                    decided += 1
                } catch {
                    terminal.say("→ \(error)")
                }
                continue walk
            }
        }
        let left = (try? desk.items().count) ?? 0
        terminal.say("\nDecided \(decided), skipped \(skipped); \(left) left to review.")
    }

    /// Asks for title, author and ISBN; Enter keeps what was read. Nil when nothing changed (or input ended).
    private func edit(_ book: Book) -> ReviewVerdict? {
        guard let title = terminal.readLine("  title [\(book.title)]: "),
            let author = terminal.readLine("  author [\(book.author ?? "")]: ")
        else { return nil }
        var isbn: ISBN?
        while true {
            guard let raw = terminal.readLine("  ISBN [\(book.isbn13 ?? "")]: ") else { return nil }
            if raw.isEmpty { break }
            if let checked = ISBN(raw) { isbn = checked; break }
            terminal.say(
                "  '\(raw)' is not a valid ISBN (its checksum fails); try again, or press Enter to keep it as it is.")
        }
        guard !title.isEmpty || !author.isEmpty || isbn != nil else {
            terminal.say("  Nothing changed.")
            return nil
        }
        return .edit(title: title.isEmpty ? nil : title, author: author.isEmpty ? nil : author, isbn: isbn)
    }
}

/// The terminal `shelfd review` runs on: single keys without Enter (no echo, Ctrl-C read as a key, so the
/// terminal is always given back as it was), whole lines for edits.
struct Terminal {
    private let input = STDIN_FILENO

    func say(_ text: String, newline: Bool = true) {
        FileHandle.standardOutput.write(Data((newline ? text + "\n" : text).utf8)) // unbuffered: prompts show at once
    }

    /// One key press; nil at the end of input.
    func readKey() -> Character? {
        var saved = termios()
        guard tcgetattr(input, &saved) == 0 else { return readByte().map { Character(Unicode.Scalar($0)) } }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(input, TCSANOW, &raw)
        defer { tcsetattr(input, TCSANOW, &saved) }
        return readByte().map { Character(Unicode.Scalar($0)) }
    }

    /// A line typed after `prompt`, without its newline; nil at the end of input.
    func readLine(_ prompt: String) -> String? {
        say(prompt, newline: false)
        var bytes: [UInt8] = []
        while let byte = readByte() {
            if byte == UInt8(ascii: "\n") {
                return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            }
            if byte != UInt8(ascii: "\r") { bytes.append(byte) }
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }

    /// Straight from the file descriptor: nothing is held in a buffer between single keys and lines.
    private func readByte() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let n = read(input, &byte, 1)
            if n == 1 { return byte }
            if n < 0 && errno == EINTR { continue }
            return nil
        }
    }
}
