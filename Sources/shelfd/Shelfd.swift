import ArgumentParser

@main struct Shelfd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "shelfd", abstract: "Turns photos of bookshelves into a catalogue of books.")
}
