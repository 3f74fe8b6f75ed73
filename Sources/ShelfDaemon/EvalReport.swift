import Foundation
import ShelfCore
import ShelfImaging
import ShelfOutputs

/// `shelfd eval`'s table for a terminal and its page for a browser, from one `EvalDocument`.
package enum EvalReport {
    static let headers = [
        "provider", "model", "photos", "right/expected", "recall", "right/reported", "precision",
        "wrong ISBNs", "needs review", "accepted right", "found", "wrong among accepted", "s/photo",
    ]

    /// One table row: the counts of a provider, a photo or everything.
    static func cells(_ label: String, model: String, _ score: EvalScore) -> [String] {
        [
            label, model, "\(score.photos)", "\(score.right)/\(score.expected)", percent(score.recall),
            "\(score.right)/\(score.reported)", percent(score.precision), "\(score.wrongISBNs)",
            percent(score.needsReviewShare), "\(score.acceptedRight)", "\(score.found)/\(score.expected)",
            "\(score.acceptedWrong)", score.secondsPerPhoto.map { String(format: "%.2f", $0) } ?? "–",
        ]
    }

    /// What shelfd would file from a photo, against its truth (`EvalScoring.tally`).
    static func filed(_ score: EvalScore) -> String {
        "accepted right \(score.acceptedRight), found \(score.found)/\(score.expected), "
            + "wrong among accepted \(score.acceptedWrong)"
    }

    /// What the reader read, when a record's title took its place, a reported book's decision, and on a labelled
    /// photo the truth book it counted as: "read «DUNE HERBERT» · accepted · counted as: Dune — Frank Herbert",
    /// "review, first candidate: Emma — Jane Austen · counted as: none".
    static func decision(of book: EvalDocument.JudgedBook, truth: [TruthDocument.Book]) -> String {
        let decided =
            switch (book.status, book.firstCandidate) {
            case (.verified, _): "accepted"
            case (.needsReview, let candidate?):
                "review, first candidate: \(describe(title: candidate.title, author: candidate.author))"
            case (.needsReview, nil): "review, no candidate"
            }
        var text = (book.spineText.map { "read «\($0)» · " } ?? "") + decided
        guard !truth.isEmpty else { return text }
        let counted = book.countedAs.flatMap { truth.indices.contains($0) ? truth[$0] : nil }
        text += " · counted as: " + (counted.map { describe(title: $0.title, author: $0.author) } ?? "none")
        return text
    }

    static func rows(_ document: EvalDocument) -> [[String]] {
        document.providers.map { cells($0.provider, model: $0.model, $0.score) } + [
            cells("overall", model: "", document.overall)
        ]
    }

    static func percent(_ value: Double?) -> String { value.map { String(format: "%.1f%%", $0 * 100) } ?? "–" }

    static func describe(title: String, author: String?) -> String { author.map { "\(title) — \($0)" } ?? title }

    /// How a reported book is shown: right or wrong against the truth, or, on a photo whose truth file lists no
    /// books (unlabelled: someone looks at each crop), accepted without asking or left for review.
    static func kind(of book: EvalDocument.JudgedBook, unlabelled: Bool) -> String {
        guard unlabelled else { return book.right ? "right" : "wrong" }
        return book.status == .verified ? "accepted" : "review"
    }

    // MARK: Text

    /// The summary table, then each provider's photos with the books it got wrong and the ones it missed.
    package static func text(_ document: EvalDocument, truth: [String: TruthDocument]) -> String {
        let table = [headers] + rows(document)
        let widths = headers.indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        var lines = table.map { row in
            row.indices.map { column in
                column < 2
                    ? row[column].padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - row[column].count) + row[column]
            }.joined(separator: "  ")
        }
        for provider in document.providers {
            lines.append("")
            lines.append("\(provider.provider) (\(provider.model)), per photo:")
            for photo in provider.photos {
                let s = photo.score
                let unlabelled = truth[photo.photo]?.books.isEmpty ?? false
                lines.append(
                    "  \(photo.photo): recall \(s.right)/\(s.expected), precision \(s.right)/\(s.reported), "
                        + "\(s.wrongISBNs) wrong ISBN\(s.wrongISBNs == 1 ? "" : "s"), \(s.needsReview) to review, "
                        + String(format: "%.2f s", s.seconds) + (unlabelled ? "" : "; \(filed(s))"))
                if let error = photo.error { lines.append("    no answer: \(error)") }
                for book in photo.books where !book.right {
                    lines.append(
                        "    \(unlabelled ? kind(of: book, unlabelled: true) + ":" : "wrong: ") \(describe(title: book.title, author: book.author))"
                    )
                }
                for book in photo.books where book.wrongISBN {
                    lines.append(
                        "    wrong ISBN: \(describe(title: book.title, author: book.author)) \(book.isbn13 ?? "")")
                }
                let books = truth[photo.photo]?.books ?? []
                for index in photo.missed where books.indices.contains(index) {
                    lines.append("    missed: \(describe(title: books[index].title, author: books[index].author))")
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    // MARK: HTML

    /// Small enough that a page of a dozen photos stays a few megabytes.
    static let thumbnailPreset = ImagePreset(maxSide: 1200, quality: 80, targetBytes: 0...250_000, minQuality: 60)
    /// The spines' crops are cut from the photo at this long side: a title's letters stay legible.
    static let cropSide = 2000

    /// A page that needs nothing beside it: each photo is embedded once (a downscaled, upright JPEG as a
    /// data URI in the style sheet), each provider's boxes drawn over it in SVG: right green, wrong red,
    /// missed (the truth's box) blue; on a photo whose truth file lists no books, accepted violet and review
    /// amber. Each reported book's spine is cut out beside its title.
    /// The page `html` gives, written whole or not at all.
    package static func writeHTML(_ document: EvalDocument, photos: [EvalPhoto], to page: URL) throws {
        try AtomicFile.write(Data(html(document, photos: photos).utf8), to: page)
    }

    package static func html(_ document: EvalDocument, photos: [EvalPhoto]) -> String {
        var style = """
            body{font-family:system-ui,sans-serif;margin:2em;color:#222}
            table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.3em .6em;text-align:right}
            td:first-child,td:nth-child(2),th{text-align:left}
            figure{display:inline-block;vertical-align:top;width:min(100%,540px);margin:0 1.5em 1.5em 0}
            .shot{position:relative;width:100%;background:#ddd center/100% 100% no-repeat}
            .shot svg{position:absolute;inset:0;width:100%;height:100%}
            rect{fill:none;stroke-width:3px;vector-effect:non-scaling-stroke}
            rect.right{stroke:#1a9e3f}rect.wrong{stroke:#d62828}rect.missed{stroke:#3b6fd1;stroke-dasharray:6 4}
            rect.accepted{stroke:#7b2cbf}rect.review{stroke:#e0a000;stroke-dasharray:4 3}
            li.right{color:#1a9e3f}li.wrong{color:#d62828}li.missed{color:#3b6fd1}li.accepted{color:#7b2cbf}
            li.review{color:#a07000}.error{color:#d62828}
            ul.books{list-style:none;padding:0}ul.books li{display:flex;gap:.6em;align-items:center;margin:.3em 0}
            ul.books img{max-height:220px;max-width:160px;border:1px solid #ccc;flex:none}
            ul.books small{display:block;color:#555}ul.notfound{color:#3b6fd1}
            """
        var aspect: [String: String] = [:], shotClass: [String: String] = [:]
        for (index, photo) in photos.enumerated() {
            shotClass[photo.name] = "p\(index)"
            guard let thumbnail = try? Preprocessor.prepare(photo.bytes, preset: thumbnailPreset) else { continue }
            aspect[photo.name] = "\(thumbnail.width) / \(thumbnail.height)"
            style +=
                "\n.p\(index){background-image:url(data:image/jpeg;base64,\(Data(thumbnail.jpeg).base64EncodedString()))}"
        }
        let truth = Dictionary(photos.map { ($0.name, $0.truth) }, uniquingKeysWith: { first, _ in first })

        var body =
            "<h1>shelfd eval</h1>\n<p>\(escape(document.truth)) · \(document.createdAt.formatted(.iso8601))</p>\n"
        body += "<table>\n<tr>" + headers.map { "<th>\(escape($0))</th>" }.joined() + "</tr>\n"
        for row in rows(document) { body += "<tr>" + row.map { "<td>\(escape($0))</td>" }.joined() + "</tr>\n" }
        body +=
            "</table>\n<p><span class=\"legend\">boxes: <b style=\"color:#1a9e3f\">right</b> · "
            + "<b style=\"color:#d62828\">wrong</b> · <b style=\"color:#3b6fd1\">missed</b>; on a photo whose truth lists "
            + "no books: <b style=\"color:#7b2cbf\">accepted</b> · <b style=\"color:#a07000\">review</b></span></p>\n"
        let bytes = Dictionary(photos.map { ($0.name, $0.bytes) }, uniquingKeysWith: { first, _ in first })
        for provider in document.providers {
            body += "<section>\n<h2>\(escape(provider.provider)) <small>\(escape(provider.model))</small></h2>\n"
            for photo in provider.photos {
                let books = truth[photo.photo]?.books ?? []
                // Each reported book's spine beside its title, so a person can tell a right one from a wrong one.
                let boxes = photo.books.map { $0.box ?? Box(x1: 0, y1: 0, x2: 1, y2: 1) }
                let crops =
                    bytes[photo.photo].flatMap { try? Preprocessor.crops($0, boxes: boxes, maxSide: cropSide) } ?? []
                var marks: [(kind: String, label: String, decision: String?, box: Box?, crop: [UInt8]?)] =
                    photo.books.enumerated().map { index, book in
                        (
                            kind(of: book, unlabelled: books.isEmpty), describe(title: book.title, author: book.author),
                            decision(of: book, truth: books), book.box,
                            book.box == nil || !crops.indices.contains(index) ? nil : crops[index]
                        )
                    }
                marks += photo.missed.filter(books.indices.contains).map { index in
                    (
                        "missed", describe(title: books[index].title, author: books[index].author), nil,
                        books[index].box, nil
                    )
                }
                let s = photo.score
                body +=
                    "<figure>\n<figcaption><b>\(escape(photo.photo))</b>: recall \(s.right)/\(s.expected), "
                    + "precision \(s.right)/\(s.reported), \(String(format: "%.2f", s.seconds)) s"
                    + (books.isEmpty ? "" : "<br>\(escape(filed(s)))") + "</figcaption>\n"
                body +=
                    "<div class=\"shot \(shotClass[photo.photo] ?? "")\" style=\"aspect-ratio:\(aspect[photo.photo] ?? "4 / 3")\">"
                body += "<svg viewBox=\"0 0 1000 1000\" preserveAspectRatio=\"none\">"
                for mark in marks {
                    guard let box = mark.box else { continue }
                    body +=
                        "<rect class=\"\(mark.kind)\" "
                        + String(
                            format: "x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">",
                            box.x1 * 1000, box.y1 * 1000, (box.x2 - box.x1) * 1000, (box.y2 - box.y1) * 1000)
                    body += "<title>\(escape(mark.kind)): \(escape(mark.label))</title></rect>"
                }
                body += "</svg></div>\n<ul class=\"books\">\n"
                if let error = photo.error { body += "<li class=\"error\">no answer: \(escape(error))</li>\n" }
                for mark in marks {
                    let image =
                        mark.crop.map {
                            "<img alt=\"\" src=\"data:image/jpeg;base64,\(Data($0).base64EncodedString())\">"
                        } ?? ""
                    let decision = mark.decision.map { "<small class=\"decision\">\(escape($0))</small>" } ?? ""
                    body +=
                        "<li class=\"\(mark.kind)\">\(image)<div><span>\(mark.kind): \(escape(mark.label))</span>\(decision)</div></li>\n"
                }
                body += "</ul>\n"
                let notFound = (photo.notFound ?? []).filter(books.indices.contains)
                if !notFound.isEmpty {
                    body +=
                        "<p>Not found (neither accepted nor a review's first candidate):</p>\n<ul class=\"notfound\">\n"
                    for index in notFound {
                        body += "<li>\(escape(describe(title: books[index].title, author: books[index].author)))</li>\n"
                    }
                    body += "</ul>\n"
                }
                body += "</figure>\n"
            }
            body += "</section>\n"
        }
        return "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>shelfd eval</title>\n"
            + "<style>\n\(style)\n</style>\n</head>\n<body>\n\(body)</body>\n</html>\n"
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
