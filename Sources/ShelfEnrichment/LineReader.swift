import CZlib
import Foundation

/// Reads a text file line by line, gzip-compressed or not (zlib reads plain files as they are), holding
/// one buffer and one line in memory: OpenLibrary dumps are tens of gigabytes.
package final class LineReader {
    private let file: gzFile
    private var buffer = [UInt8](repeating: 0, count: 1 << 17)
    private var start = 0, end = 0
    private var finished = false
    package let path: String
    /// 1-based number of the line last returned.
    package private(set) var lineNumber = 0

    package init(path: String) throws(CatalogueError) {
        guard FileManager.default.isReadableFile(atPath: path), let file = gzopen(path, "rb") else {
            throw CatalogueError(.unreadableFile, "Cannot read \(path): \(String(cString: strerror(errno))).")
        }
        gzbuffer(file, 1 << 17)
        self.file = file
        self.path = path
    }

    deinit { gzclose(file) }

    /// The next line without its line ending (LF or CRLF), or nil at the end of the file.
    package func next() throws(CatalogueError) -> String? {
        var line: [UInt8] = []
        while true {
            if start == end {
                if finished { break }
                try fill()
                if start == end { finished = true; break }
            }
            if let newline = buffer[start..<end].firstIndex(of: 10) {
                line.append(contentsOf: buffer[start..<newline])
                start = newline + 1
                return finish(line)
            }
            line.append(contentsOf: buffer[start..<end])
            start = end
        }
        return line.isEmpty ? nil : finish(line)
    }

    private func finish(_ bytes: [UInt8]) -> String {
        lineNumber += 1
        var line = bytes
        if line.last == 13 { line.removeLast() }
        if lineNumber == 1, line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) } // a spreadsheet's BOM
        return String(decoding: line, as: UTF8.self)
    }

    private func fill() throws(CatalogueError) {
        let count = buffer.withUnsafeMutableBytes { gzread(file, $0.baseAddress, UInt32($0.count)) }
        guard count >= 0 else {
            var code: Int32 = 0
            let message = gzerror(file, &code).map { String(cString: $0) } ?? "read error"
            throw CatalogueError(
                .unreadableFile, "Cannot read \(path) past line \(lineNumber): \(message). Is the file complete?")
        }
        start = 0
        end = Int(count)
    }
}
