/// A six-page deck whose pages share one resource dictionary (on the page tree, inherited, as some
/// generators do), built so that each page reaches its pictures in a different way:
///
/// 1. an image drawn by the page itself (content stored with FlateDecode);
/// 2. an image drawn by a form inside a form (content stored with ASCIIHexDecode), both forms with the
///    shared dictionary as their resources;
/// 3. an image drawn by glyph `a` of a Type 3 font whose resources are the shared dictionary;
/// 4. an image drawn by an annotation's appearance stream; the page also has a popup, a link to page 5,
///    a link to a web address and a hidden note;
/// 5. an image drawn by a tiling pattern and one by a soft mask (a graphics state's luminosity group);
/// 6. content in two streams, one marked with an optional content group the document hides, an image
///    in a visible group, an inline image in a named color space, glyph `b` of the Type 3 font (which
///    draws an image of its own), and a thumbnail, private application data, XMP metadata and an
///    open action in JavaScript on the page.
///
/// Each page says `PAGE-n-TEXT`; fonts are named `FixtureFontN` (Type 1, not embedded), images are
/// 2×2 gray pictures whose bytes tell them apart.
enum SharedResourcesDeck {
    static let pageCount = 6

    /// The images (by `image(n)` bytes) and fonts (by name) page `n` (from 1) draws.
    static let expected: [Int: (images: Set<Int>, fonts: Set<String>)] = [
        1: ([1], ["FixtureFont1"]),
        2: ([2], ["FixtureFont2"]),
        3: ([3], ["FixtureFont3", "FixtureType3"]),
        4: ([4], ["FixtureFont4"]),
        5: ([5, 6], ["FixtureFont5"]),
        6: ([7, 8], ["FixtureFont6", "FixtureType3"]),
    ]

    /// Text that must not be in any page's bytes: it is not drawn (a hidden note, text an appearance
    /// stream draws instead, the thumbnail's, the page's private data, metadata, JavaScript).
    static let neverWritten = [
        "HIDDEN-NOTE-TEXT", "ANNOTATION-NOTE-TEXT", "Fixture Author", "PIECEINFO-SECRET", "METADATA-SECRET", "JS-SECRET",
    ]

    /// Image `n`'s four pixels.
    static func image(_ n: Int) -> [UInt8] { [UInt8(n * 20), UInt8(255 - n * 20), UInt8(n * 7), 128] }

    static func make() -> [UInt8] {
        var pdf = RawPDF()
        let pages = (3...8).map { "\($0) 0 R" }.joined(separator: " ")
        pdf.add(1, "<</Type/Catalog/Pages 2 0 R/OCProperties<</OCGs[60 0 R 61 0 R]/D<</OFF[61 0 R]>>>>/OpenAction<</S/JavaScript/JS(app.alert('JS-SECRET'))>>>>")
        pdf.add(2, "<</Type/Pages/Kids[\(pages)]/Count 6/Resources 9 0 R/MediaBox[0 0 200 200]>>")
        let fonts = (1...6).map { "/F\($0) \(10 + $0) 0 R" }.joined()
        let images = (1...8).map { "/Im\($0) \(20 + $0) 0 R" }.joined()
        pdf.add(9, """
            <</Font<<\(fonts)/T3 17 0 R>>/XObject<<\(images)/FmA 31 0 R/FmB 32 0 R>>\
            /ExtGState<</GS1 40 0 R/GS2<</CA 0.5>>>>/Pattern<</P1 41 0 R>>\
            /ColorSpace<</CS1[/Indexed/DeviceRGB 1<ff000000ff00>]>>/Properties<</MCon 60 0 R/MCoff 61 0 R>>\
            /ProcSet[/PDF/Text/ImageB/ImageI]>>
            """)
        for n in 1...6 { pdf.add(10 + n, "<</Type/Font/Subtype/Type1/BaseFont/FixtureFont\(n)>>") }
        pdf.add(17, """
            <</Type/Font/Subtype/Type3/Name/FixtureType3/FontBBox[0 0 1000 1000]/FontMatrix[0.001 0 0 0.001 0 0]\
            /CharProcs<</a 18 0 R/b 19 0 R>>/Encoding<</Type/Encoding/Differences[97/a/b]>>/FirstChar 97/LastChar 98\
            /Widths[1000 1000]/Resources 9 0 R>>
            """)
        pdf.addStream(18, text: "1000 0 d0 q 1000 0 0 1000 0 0 cm /Im3 Do Q")
        pdf.addStream(19, text: "1000 0 d0 q 1000 0 0 1000 0 0 cm /Im8 Do Q", encoding: .flate)
        for n in 1...8 {
            pdf.addStream(20 + n, "/Type/XObject/Subtype/Image/Width 2/Height 2/ColorSpace/DeviceGray/BitsPerComponent 8", data: image(n))
        }
        pdf.addStream(29, "/Type/XObject/Subtype/Image/Width 2/Height 2/ColorSpace/DeviceGray/BitsPerComponent 8", data: image(9))
        let form = "/Type/XObject/Subtype/Form/BBox[0 0 200 200]/Resources 9 0 R"
        pdf.addStream(31, form, text: "q /FmB Do Q")
        pdf.addStream(32, form, text: "q 50 0 0 50 10 10 cm /Im2 Do Q BT /F2 10 Tf 10 150 Td (FORM-B-TEXT) Tj ET", encoding: .flate)
        pdf.add(40, "<</Type/ExtGState/SMask<</Type/Mask/S/Luminosity/G 42 0 R>>>>")
        pdf.addStream(41, "/Type/Pattern/PatternType 1/PaintType 1/TilingType 1/BBox[0 0 20 20]/XStep 20/YStep 20/Resources 9 0 R",
            text: "q 20 0 0 20 0 0 cm /Im5 Do Q")
        pdf.addStream(42, form + "/Group<</S/Transparency/CS/DeviceGray>>", text: "q 200 0 0 200 0 0 cm /Im6 Do Q")

        pdf.add(3, "<</Type/Page/Parent 2 0 R/Contents 50 0 R>>")
        pdf.addStream(50, text: "BT /F1 12 Tf 10 180 Td (PAGE-1-TEXT) Tj ET q 50 0 0 50 20 20 cm /Im1 Do Q", encoding: .flate)
        pdf.add(4, "<</Type/Page/Parent 2 0 R/Contents 51 0 R>>")
        pdf.addStream(51, text: "q /FmA Do Q BT /F2 12 Tf 10 180 Td (PAGE-2-TEXT) Tj ET", encoding: .hex)
        pdf.add(5, "<</Type/Page/Parent 2 0 R/Contents 52 0 R>>")
        pdf.addStream(52, text: "BT /F3 12 Tf 10 180 Td (PAGE-3-TEXT) Tj /T3 40 Tf 0 -100 Td (a) Tj ET")
        pdf.add(6, "<</Type/Page/Parent 2 0 R/Contents 53 0 R/Annots[70 0 R 71 0 R 72 0 R 73 0 R 74 0 R]>>")
        pdf.addStream(53, text: "BT /F4 12 Tf 10 180 Td (PAGE-4-TEXT) Tj ET")
        pdf.add(70, """
            <</Type/Annot/Subtype/Square/Rect[20 20 120 120]/AP<</N 75 0 R/D 76 0 R>>/Contents(ANNOTATION-NOTE-TEXT)\
            /P 6 0 R/Popup 71 0 R/T(Fixture Author)/M(D:20260101000000Z)>>
            """)
        pdf.add(71, "<</Type/Annot/Subtype/Popup/Parent 70 0 R/Rect[120 120 180 180]>>")
        pdf.add(72, "<</Type/Annot/Subtype/Link/Rect[0 0 50 50]/Dest[7 0 R/Fit]>>")
        pdf.add(73, "<</Type/Annot/Subtype/Link/Rect[50 0 100 50]/Border[0 0 0]/A<</S/URI/URI(https://example.com/slides)/Next<</S/JavaScript/JS(app.alert('JS-SECRET'))>>>>>>")
        pdf.add(74, "<</Type/Annot/Subtype/Text/F 2/Rect[100 0 120 20]/Contents(HIDDEN-NOTE-TEXT)>>")
        pdf.addStream(75, "/Type/XObject/Subtype/Form/BBox[0 0 100 100]/Resources 9 0 R", text: "q 100 0 0 100 0 0 cm /Im4 Do Q")
        pdf.addStream(76, "/Type/XObject/Subtype/Form/BBox[0 0 100 100]/Resources 9 0 R", text: "q 100 0 0 100 0 0 cm /Im1 Do Q")
        pdf.add(7, "<</Type/Page/Parent 2 0 R/Contents 54 0 R>>")
        pdf.addStream(54, text: "q /GS1 gs /Pattern cs /P1 scn 0 0 200 100 re f Q BT /F5 12 Tf 10 180 Td (PAGE-5-TEXT) Tj ET")
        pdf.add(8, """
            <</Type/Page/Parent 2 0 R/Contents[55 0 R 56 0 R]/Thumb 29 0 R/PieceInfo<</App<</Private(PIECEINFO-SECRET)>>>>\
            /Metadata 62 0 R/AA<</O<</S/JavaScript/JS(app.alert('JS-SECRET'))>>>>/StructParents 0>>
            """)
        pdf.addStream(55, text: "BT /F6 12 Tf 10 180 Td (PAGE-6-TEXT) Tj ET /OC /MCoff BDC BT /F6 12 Tf 10 150 Td (OFF-LAYER-TEXT) Tj ET EMC",
            encoding: .flate)
        pdf.addStream(56, text: """
            /OC /MCon BDC q 50 0 0 50 20 20 cm /Im7 Do Q EMC
            q 40 0 0 20 100 100 cm BI /W 2 /H 1 /CS /CS1 /BPC 8 ID \u{0}\u{1} EI Q
            BT /T3 40 Tf 120 20 Td (b) Tj ET
            """)
        pdf.add(60, "<</Type/OCG/Name(Visible layer)>>")
        pdf.add(61, "<</Type/OCG/Name(Hidden layer)>>")
        pdf.addStream(62, "/Type/Metadata/Subtype/XML", text: "METADATA-SECRET")
        return pdf.bytes(root: 1)
    }
}
