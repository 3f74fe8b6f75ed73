extension CatalogueRecord {
    /// One work across its editions: the folded full title and the author's surname. The full title, not
    /// the matching form, because the volumes of a series share a main title ("Edad Moderna : …").
    package static func workKey(title: String, author: String?) -> String {
        workKey(foldedTitle: TextNormalization.fold(title), surname: TextNormalization.surname(author))
    }

    /// The same, from a title already folded and a surname already found.
    package static func workKey(foldedTitle: String, surname: String) -> String { "\(foldedTitle)|\(surname)" }
}
