import Testing
@testable import ShelfCore

@Suite struct TextNormalizationTests {
    @Test(
        "Folding gives the same words by the fast table as by Foundation",
        arguments: [
            "Enseñar a investigar : libro del alumnado ", "L’Orquestra i cada instrument",
            "Ça m’est égal — « vraiment »",
            "Straße", "Æsop’s Fables", "Ølstykke", "Dragon's", "  ¿Y si Einstein estuviera equivocado?  ",
            "91(026)(611) Cab",
            "Œuvres complètes", "Łódź", "Ἀριστοτέλης", "東京物語", "ﬁnal ﬂag", "Cafe\u{301} Mu\u{308}ller", "I** Sti",
            "½ de 3",
            "zero\u{200C}width", "Tab\tand\nnewline",
        ])
    func fastFoldMatchesFoundation(_ text: String) {
        #expect(TextNormalization.fold(text) == TextNormalization.foundationFold(text))
    }

    @Test func foldsCaseAccentsAndPunctuation() {
        #expect(TextNormalization.fold("¡Vaya  TIMO!  Las Pseudociencias") == "vaya timo las pseudociencias")
        #expect(TextNormalization.fold("L’Orquestra") == "lorquestra")
    }
}

@Suite struct TitleAndSurnameTests {
    @Test(
        "The matching title drops brackets, a subtitle after a real title, and a leading article",
        arguments: [
            ("The Hobbit, or There and Back Again", "hobbit or there and back again"),
            ("Dune (Dune Chronicles, #1)", "dune"),
            ("La Actitud científica : una defensa de la ciencia", "actitud cientifica"),
            ("Wok : [cocina asiática para cada día]", "wok"),
            ("Guerra y paz - edición íntegra", "guerra y paz"),
            ("Cien años de soledad — Gabriel García Márquez", "cien anos de soledad"),
            ("S=ex² : la ciencia del sexo", "s ex²"),
            ("A: a novel", "a novel"),
            ("[La Tija del bambú] : the authorised edition", "authorised edition"),
            ("El", "el"),
        ])
    func matchingTitle(_ raw: String, _ expected: String) {
        #expect(TextNormalization.title(raw) == expected)
    }

    @Test(
        "The surname is the first author's, in either order",
        arguments: [
            ("Herbert, Frank", "herbert"), ("Frank Herbert", "herbert"), ("Martin Luther King Jr.", "king"),
            ("Bunge, Mario, 1919-2020", "bunge"), ("Belmonte Nieto, Manuel", "nieto"),
            ("Pratchett & Gaiman", "pratchett"),
            ("; Gaiman", ""), ("   ", ""), ("López-Borrull, Alexandre", "borrull"),
        ])
    func surname(_ author: String, _ expected: String) {
        #expect(TextNormalization.surname(author) == expected)
    }
}
