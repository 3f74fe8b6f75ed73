import ArgumentParser
import Foundation
import ShelfApp
import ShelfCore
import ShelfDaemon

@main
struct Shelfd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shelfd",
        abstract: "Turns photos of bookshelves into a catalogue of books.",
        discussion: "Drop shelf photos into ~/Shelves/incoming; 'shelfd watch' catalogues them as they arrive.",
        subcommands: [
            Watch.self, Run.self, Scan.self, Rescan.self, Status.self, Retry.self, Review.self, Export.self,
            Library.self, Shelf.self, Catalogue.self, Hardcover.self, Doctor.self, Eval.self, Web.self, Batch.self,
            StoreCommand.self,
        ])

    /// Usage errors exit 2 (docs/commands.md), not ArgumentParser's 64; anything else that stops a command exits 1.
    static func main() async {
        IdleMemory.limitArenas()
        do {
            // The store's calls wait on their thread: not on Swift's cooperative pool (DaemonThreads.swift).
            try await withTaskExecutorPreference(DaemonThreads.shared) {
                var command = try parseAsRoot()
                do {
                    if var asyncCommand = command as? any AsyncParsableCommand {
                        try await asyncCommand.run()
                    } else {
                        try command.run()
                    }
                } catch let error as ValidationError {
                    throw RunRefusal(message: error.message, usage: usageString(for: type(of: command)))
                }
            }
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch let refusal as RunRefusal {
            // Worded as ArgumentParser words a usage error found while parsing.
            let path = refusal.usage.split(separator: " ").prefix { !$0.hasPrefix("[") && !$0.hasPrefix("<") }
            let help = "See '\(path.joined(separator: " ")) --help' for more information."
            FileHandle.standardError.write(
                Data("Error: \(refusal.message)\nUsage: \(refusal.usage)\n  \(help)\n".utf8))
            Foundation.exit(2)
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            if code == .success { // --help, --version
                Shelfd.exit(withError: error)
            }
            FileHandle.standardError.write(Data("shelfd: \(error)\n".utf8))
            Foundation.exit(1)
        }
    }
}

/// A usage error a command found while running (a missing token, two options that cannot go together): said with
/// that command's usage, not the root's, which ArgumentParser would print once parsing is over.
private struct RunRefusal: Error {
    let message: String
    let usage: String
}
