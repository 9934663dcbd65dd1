import Foundation
import PulseCore
import PulseStore
import PulseTestSupport
import Testing

@testable import PulsePack

/// Every bad input gets one error line naming the file, a non-zero exit, and leaves the package as it was.
struct BadInputTests {
    /// A package built from a good three-page deck, and its files before the bad build.
    struct Scene {
        let scratch: TestFolder
        let folder: URL
        let out: URL
        let before: [String: Data]

        init(_ name: String = #function) throws {
            scratch = try TestFolder(name)
            folder = scratch.url
            out = folder.appendingPathComponent("pkg")
            let session = try Support.sessionFile(in: folder, deck: Support.fixtures.appendingPathComponent("pdf/three-pages.pdf"))
            try Support.build(session, out: out)
            before = Support.snapshot(out)
        }

        /// Builds a session whose deck is `deck` with the CLI; expects `code`, an error naming `names`, and no change.
        func expectRejected(deck: URL, code: Int32 = 65, naming names: String) throws {
            let session = try Support.sessionFile(in: folder, deck: deck)
            try expectRejected(["build", session.path, "--out", out.path], code: code, naming: names)
        }

        func expectRejected(session: URL, naming names: String) throws {
            try expectRejected(["build", session.path, "--out", out.path], naming: names)
        }

        func expectRejected(_ arguments: [String], code: Int32 = 65, naming names: String) throws {
            let result = Support.cli(arguments)
            #expect(result.code == code, "exit code for \(arguments)")
            let errors = result.err.filter { $0.contains("error") }
            #expect(errors.count == 1, "exactly one error line: \(result.err)")
            #expect(errors.first?.contains(names) == true, "the error names \(names): \(errors)")
            #expect(Support.snapshot(out) == before, "the package must be left as it was")
            #expect(Verifier(package: out, keys: nil).run().problems.isEmpty)
        }
    }

    func write(_ bytes: [UInt8], _ name: String, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    @Test func corruptPDF() throws {
        let scene = try Scene()
        var bytes = Array("%PDF-1.7\n".utf8)
        bytes += (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }
        let deck = try write(bytes, "corrupt.pdf", in: scene.folder)
        try scene.expectRejected(deck: deck, naming: "corrupt.pdf: not a readable PDF")
    }

    @Test func truncatedPDF() throws {
        let scene = try Scene()
        let full = Array(try Data(contentsOf: Support.keynotePDF))
        let deck = try write(Array(full.prefix(full.count / 2)), "truncated.pdf", in: scene.folder)
        try scene.expectRejected(deck: deck, naming: "truncated.pdf")
    }

    @Test func passwordProtectedPDF() throws {
        let scene = try Scene()
        try scene.expectRejected(deck: Support.fixtures.appendingPathComponent("pdf/password.pdf"), naming: "password-protected")
    }

    @Test func pdfWithNoPages() throws {
        let scene = try Scene()
        try scene.expectRejected(deck: Support.fixtures.appendingPathComponent("pdf/no-pages.pdf"), naming: "no pages")
    }

    @Test func notAPDFAtAll() throws {
        let scene = try Scene()
        let deck = try write(Array("hello".utf8), "notes.pdf", in: scene.folder)
        try scene.expectRejected(deck: deck, naming: "notes.pdf: not a PDF")
    }

    @Test func nonImageFileInImageFolder() throws {
        let scene = try Scene()
        let deck = try Support.copy(Support.keynoteImages, to: scene.folder.appendingPathComponent("deck"))
        _ = try write(Array("speaker notes".utf8), "slide7.txt", in: deck)
        try scene.expectRejected(deck: deck, naming: "slide7.txt: not a PNG, JPEG or WebP image")
    }

    @Test func unreadableFileInImageFolder() throws {
        let scene = try Scene()
        let deck = try Support.copy(Support.keynoteImages, to: scene.folder.appendingPathComponent("deck"))
        try FileManager.default.createSymbolicLink(atPath: deck.appendingPathComponent("slide15.png").path, withDestinationPath: "/nonexistent/slide.png")
        try scene.expectRejected(deck: deck, naming: "slide15.png: cannot read")
    }

    @Test func truncatedImageIsCaughtMidBuild() throws {
        let scene = try Scene()
        let deck = try Support.copy(Support.keynoteImages, to: scene.folder.appendingPathComponent("deck"))
        let slide = deck.appendingPathComponent("slide12.png")
        let bytes = Array(try Data(contentsOf: slide))
        try Data(bytes.prefix(bytes.count - 40)).write(to: slide)
        let session = try Support.sessionFile(in: scene.folder, deck: deck)
        let result = Support.cli(["build", session.path, "--out", scene.out.path])
        #expect(result.code == 65)
        #expect(result.err.count == 1 && result.err[0].contains("slide12.png: PNG"), "\(result.err)")
        // The blobs of the slides done before the failure are taken away again.
        #expect(Support.snapshot(scene.out) == scene.before)
        #expect(Verifier(package: scene.out, keys: nil).run().problems.isEmpty)
    }

    @Test func missingField() throws {
        let scene = try Scene()
        let session = scene.folder.appendingPathComponent("missing.json")
        try Data(##"{ "id": "talk", "startsAt": "2026-12-03T09:00:00+01:00", "endsAt": "2026-12-03T10:00:00+01:00", "agenda": [], "speakers": [], "branding": {"primaryColor": "#000000", "accentColor": "#000000", "theme": "dark"} }"##.utf8).write(to: session)
        try scene.expectRejected(["build", session.path, "--deck", Support.keynotePDF.path, "--out", scene.out.path], naming: "missing.json: title: missing")
    }

    @Test func mistypedFields() throws {
        let scene = try Scene()
        let deck = Support.keynotePDF, folder = scene.folder
        try scene.expectRejected(
            session: Support.sessionFile(in: folder, deck: deck, agenda: #"[{"start": "09:00", "durationMinutes": "ten", "title": "x"}]"#),
            naming: "agenda[0].durationMinutes: expected an integer, found a string")
        try scene.expectRejected(
            session: Support.sessionFile(in: folder, deck: deck, branding: ##"{"primaryColor": "#000000", "accentColor": "#000000", "theme": "blue"}"##),
            naming: "branding.theme: must be one of")
        try scene.expectRejected(
            session: Support.sessionFile(in: folder, deck: deck, branding: ##"{"primaryColor": "red", "accentColor": "#000000", "theme": "dark"}"##),
            naming: "branding.primaryColor: expected a colour")
        try scene.expectRejected(
            session: Support.sessionFile(in: folder, deck: deck, speakers: #"[{"id": "a", "name": "A", "photo": "nowhere.png"}]"#),
            naming: "speakers[0].photo: no such file")
        try scene.expectRejected(
            session: Support.sessionFile(in: folder, deck: deck, agenda: #"[{"start": "09:00", "durationMinutes": 5, "title": "x", "speakers": ["ghost"]}]"#),
            naming: "agenda[0].speakers: names \"ghost\"")
    }

    /// `releaseAfterSlide` counts slides from 0: on a three-slide deck, 2 is the last and 3 is bad input.
    @Test func releaseAfterSlidePastTheDeck() throws {
        let scene = try Scene()
        let deck = Support.fixtures.appendingPathComponent("pdf/three-pages.pdf")
        let gated = { (slide: Int) in
            #", "resources": [{ "id": "a", "title": "A", "kind": "note", "body": "x" }, "#
                + #"{ "id": "late", "title": "Late", "kind": "link", "url": "https://example.com", "releaseAfterSlide": \#(slide) }]"#
        }
        try scene.expectRejected(
            session: Support.sessionFile(in: scene.folder, deck: deck, extra: gated(3)),
            naming: "resources[1].releaseAfterSlide: slide 3 is not in the deck: it has 3 slides, numbered 0 to 2")
        let last = Support.cli(["build", try Support.sessionFile(in: scene.folder, deck: deck, extra: gated(2)).path, "--out", scene.out.path, "--quiet"])
        #expect(last.code == 0, "\(last.err)")
    }

    @Test func notJSON() throws {
        let scene = try Scene()
        let session = try write(Array("{ \"id\": ".utf8), "broken.json", in: scene.folder)
        try scene.expectRejected(["build", session.path, "--deck", Support.keynotePDF.path, "--out", scene.out.path], naming: "broken.json:1:9: unexpected end of file: expected a value")
    }

    @Test func unknownFieldIsAnErrorUnlessLenient() throws {
        let scene = try Scene()
        let session = try Support.sessionFile(in: scene.folder, deck: Support.keynotePDF, extra: #", "titel": "red""#)
        try scene.expectRejected(["build", session.path, "--out", scene.out.path],
                                 naming: #"\#(session.lastPathComponent): titel: unknown field; did you mean "title"? (--lenient ignores unknown fields)"#)
        let result = Support.cli(["build", session.path, "--out", scene.out.path, "--quiet", "--lenient"])
        #expect(result.code == 0)
        #expect(result.err == [#"pulse-pack: warning: \#(session.path): titel: unknown field, ignored; did you mean "title"?"#])
    }

    @Test func outputThatIsSomethingElse() throws {
        let scene = try Scene()
        let session = try Support.sessionFile(in: scene.folder, deck: Support.keynotePDF)
        let file = try write(Array("x".utf8), "a-file", in: scene.folder)
        try scene.expectRejected(["build", session.path, "--out", file.path], naming: "a-file: output exists and is not a folder")
        let home = scene.folder.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        _ = try write(Array("mine".utf8), "thesis.tex", in: home)
        try scene.expectRejected(["build", session.path, "--out", home.path], naming: "is not a pulse package")
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.path) == ["thesis.tex"])
    }

    @Test func usageErrorsExit64() {
        #expect(Support.cli(["build"]).code == 64)
        #expect(Support.cli(["build", "x.json"]).code == 64)
        #expect(Support.cli(["frobnicate"]).code == 64)
        #expect(Support.cli(["build", "x.json", "--out", "o", "--jobs", "zero"]).code == 64)
    }
}
