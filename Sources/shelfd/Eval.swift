import ArgumentParser
import Foundation
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfDaemon

struct Eval: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Measure providers on photos whose books are known: recall, precision, wrong ISBNs, seconds per photo.",
        discussion: """
            Every photo in the folder with a truth file beside it goes through preprocessing, the provider, the book \
            checks and enrichment, as in the pipeline, but outside the queue: nothing is added to the library, \
            results or review. A truth file is either <photo>.truth.json in schema shelfd.truth/1 (its books left to \
            right, with boxes), or your own list of the books on a photo: IMG_1.truth.json beside IMG_1.jpg (or \
            .jpeg, .png, .heic …) holding [{"title": "…", "authors": ["…"]}, …], in any order, no boxes. \
            A reported book is right when its title (before a colon) and first author's surname match a truth book \
            after normalisation, or it has the truth book's ISBN, each truth book once. Beside recall and \
            precision it counts what shelfd would file: accepted right (accepted books that are a truth book), \
            found (truth books accepted, or offered first to \
            a person reviewing), wrong among accepted. \
            A truth file that lists no books makes its photo unlabelled: its books are shown accepted or for review, \
            for a person to judge from their spines on the --html page. \
            Enrichment reads your local catalogue, or with --catalogue a temporary one made from that file. \
            The offline reader (--provider ocr) accepts only books its catalogue holds: to measure it on your own \
            photos, give --add-listed-books, with --catalogue a large catalogue for the books to hide among.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Folder of photos with <photo>.truth.json files.", valueName: "dir")) var truth: String
    @Option(
        name: .customLong("provider"),
        help: ArgumentHelp(
            "A provider to measure; repeat for several (default: pipeline.provider).", valueName: "provider"))
    var providers: [Configuration.Provider] = []
    @Option(
        help: ArgumentHelp(
            "Look books up in a temporary catalogue imported from this file instead of yours.", valueName: "file"))
    var catalogue: String?
    @Flag(
        help: ArgumentHelp(
            "Add every truth file's books to a temporary catalogue, on top of --catalogue's books if given "
                + "(never to yours), so that the offline reader can match them."))
    var addListedBooks = false
    @Flag(name: .long, help: "Print the evaluation as a shelfd.eval/1 JSON document.") var json = false
    @Option(
        help: ArgumentHelp(
            "Also write a self-contained HTML page: each photo with its boxes, each reported book's spine "
                + "beside its title, its decision and the truth book it counted as, the truth books not "
                + "found, and the table.", valueName: "file"))
    var html: String?

    func run() async throws {
        let folder = URL(fileURLWithPath: truth)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw ValidationError(
                "--truth \(truth) is not a folder. Give the folder that holds the photos and their .truth.json files.")
        }
        let photos = try EvalPhoto.all(in: folder)
        if photos.isEmpty {
            throw ValidationError(
                "No truth files in \(truth): each photo to measure needs a <photo>.truth.json beside it (schema shelfd.truth/1, as in samples/, or a list [{title, authors}] of its books)."
            )
        }
        let (config, secrets, logger) = try global.load(quiet: true)

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "shelfd-eval-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let evaluator = try Evaluator.forCommand(
            config: config, secrets: secrets, catalogue: catalogue,
            listedBooks: addListedBooks ? photos.flatMap(\.truth.books) : [],
            scratch: scratch, logger: logger)

        var measured: [EvalDocument.Provider] = []
        // `auto` is measured as what it stands for on this machine, and named so.
        var automatic = config
        automatic.pipeline.provider = .auto
        let auto = ProviderChoice.resolve(config: automatic, secrets: secrets).provider
        let kinds = (providers.isEmpty ? [config.pipeline.provider] : providers).map { $0 == .auto ? auto : $0 }
        for kind in kinds where !measured.contains(where: { $0.provider == kind.rawValue }) {
            measured.append(try await evaluator.evaluate(photos, with: kind))
        }
        let document = EvalDocument(truth: folder.path, providers: measured)
        for provider in measured {
            let failed = provider.photos.filter { $0.error != nil }.count
            if failed > 0 {
                FileHandle.standardError.write(
                    Data(
                        "shelfd: \(provider.provider) gave no answer for \(failed) of \(provider.photos.count) photos; their books count as missed (each photo's reason is in the report).\n"
                            .utf8))
            }
        }
        if json {
            try printJSON(document)
        } else {
            print(
                EvalReport.text(document, truth: Dictionary(photos.map { ($0.name, $0.truth) }) { first, _ in first }))
        }
        if let html {
            let page = URL(fileURLWithPath: html)
            do { try EvalReport.writeHTML(document, photos: photos, to: page) } catch {
                throw StartupError("Cannot write \(page.path): \(error). Check that its folder exists and is writable.")
            }
            FileHandle.standardError.write(Data("shelfd: wrote \(page.path)\n".utf8))
        }
    }
}
