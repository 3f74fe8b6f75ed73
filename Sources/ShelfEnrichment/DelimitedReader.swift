// Kept hand-written: measured against the maintained parsers (release builds, parsing only, 2026-11-24) on the
// library data set's catalogue.csv (15,229 rows, the file MatchBenchmark reads) and on a Goodreads-style export
// (BOM, CRLF, a quoted multi-line review, doubled quotes, the ="9780441172719" ISBN cells Goodreads writes):
//   this reader          769 M instructions (callgrind), 34-115 ms wall; reads the Goodreads sample;
//   CSV.swift 2.5.2     1301 M instructions, 86-266 ms; reads it (keeps CRLF inside fields);
//   SwiftCSV 0.10.0     1559 M instructions, 75-354 ms; rejects it ("Can't have non-quote here" at ="…").
// Neither reads through `LineReader` (gzip-compressed exports) or knows the line a record ends on, which skip
// reasons name ("line 6: no title"); parsing is under 1% of `shelfd catalogue import` of that file (15 s, debug).

/// Records of a comma- or tab-separated file (RFC 4180 quoting: fields in double quotes may hold the
/// delimiter, doubled quotes and line breaks), streamed from a `LineReader`.
package struct DelimitedReader {
    let lines: LineReader
    let delimiter: Character

    /// Reads the header and picks the delimiter from it: a tab when it has more tabs than commas.
    package static func open(_ lines: LineReader) throws(CatalogueError) -> (reader: DelimitedReader, header: [String])?
    {
        guard let first = try lines.next() else { return nil }
        let delimiter: Character = first.filter { $0 == "\t" }.count > first.filter { $0 == "," }.count ? "\t" : ","
        let reader = DelimitedReader(lines: lines, delimiter: delimiter)
        return (reader, try reader.fields(startingWith: first))
    }

    /// The next record's fields, or nil at the end of the file.
    package func next() throws(CatalogueError) -> [String]? {
        guard let line = try lines.next() else { return nil }
        return try fields(startingWith: line)
    }

    private func fields(startingWith line: String) throws(CatalogueError) -> [String] {
        var fields: [String] = [], field = "", quoted = false, atFieldStart = true
        var text = line
        while true {
            var chars = text.makeIterator()
            while let c = chars.next() {
                if quoted {
                    if c == "\"" {
                        // A doubled quote is a quote; a single one closes the field.
                        var lookahead = chars
                        if lookahead.next() == "\"" { field.append("\""); chars = lookahead } else { quoted = false }
                    } else {
                        field.append(c)
                    }
                } else if c == delimiter {
                    fields.append(field); field = ""; atFieldStart = true; continue
                } else if c == "\"" && atFieldStart {
                    quoted = true
                } else {
                    field.append(c)
                }
                atFieldStart = false
            }
            // Still inside quotes at the end of the line: the field goes on over the next line.
            guard quoted, let more = try lines.next() else { break }
            field.append("\n")
            text = more
        }
        fields.append(field)
        return fields
    }
}
