import ArgumentParser
import Foundation
import ShelfApp
import ShelfCore

struct CatalogueImport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add books to the local catalogue from library exports or OpenLibrary dumps.",
        discussion: """
            CSV or tab-separated, header names in any case: title and author, optionally isbn, year, tag (or \
            call number) and series; Goodreads, StoryGraph and LibraryThing exports as they come. OpenLibrary \
            dumps keep their names (ol_dump_authors_*.txt.gz first, so editions and works get author names). \
            Importing a file again adds nothing twice.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("CSV, TSV or OpenLibrary dump files (.gz or not).", valueName: "file")) var files:
        [String] = []

    func validate() throws {
        if files.isEmpty {
            throw ValidationError(
                "Give at least one file, e.g. 'shelfd catalogue import goodreads_library_export.csv'.")
        }
    }

    func run() throws {
        let (config, _, _) = try global.load(quiet: true)
        guard let catalogue = try Catalogue.desk(config, create: true) else { return }
        var failed = false
        for file in CatalogueDesk.importOrder(files) {
            do {
                let report = try catalogue.importFile(file)
                print(
                    "\(file): \(report.imported) imported, \(report.duplicates) already there, \(report.skipped) skipped (\(report.format))"
                )
                for reason in report.skipReasons {
                    FileHandle.standardError.write(Data("shelfd: \(file): skipped \(reason)\n".utf8))
                }
                if report.skipped > report.skipReasons.count {
                    FileHandle.standardError.write(
                        Data("shelfd: \(file): … and \(report.skipped - report.skipReasons.count) more skipped\n".utf8))
                }
            } catch {
                failed = true
                FileHandle.standardError.write(Data("shelfd: \(error)\n".utf8))
            }
        }
        if failed { throw ExitCode(1) }
    }
}
